/// A gRPC request's header fields as the parts they are made of, in the order they go on the
/// wire: `leading` (`:method`, `:scheme`), `:path`, `:authority`, `grpc-timeout`, `common`,
/// `grpc-previous-rpc-attempts`, `authorization: Bearer <token>`, then `trailing`.
///
/// The I/O thread lays the parts out into the connection's one reused header buffer when it
/// submits the stream, so a call builds no header block of its own: the blocks are ones built
/// once and shared (or empty), and the strings are the call's own.
package struct HTTP2RequestHead: Sendable {
    // Constants: a struct of this many fields whose explicit initializer assigns `var`s is built
    // in memory and then copied out whole (a retain and a release of every field, per call).
    /// The fields before `:path`, a block built once.
    package let leading: HTTP2HeaderBlock
    package let path: String
    package let authority: String
    /// The value of `grpc-timeout`; none when nil.
    package let timeout: GRPCTimeout?
    /// The fields after `grpc-timeout`, usually a block built once.
    package let common: HTTP2HeaderBlock
    /// The value of `grpc-previous-rpc-attempts`; none when nil.
    package let previousAttempts: String?
    /// The bearer token sent as `authorization` (never indexed by HPACK); none when nil.
    package let bearerToken: String?
    /// The caller's own fields, last.
    package let trailing: HTTP2HeaderBlock

    package init(
        leading: HTTP2HeaderBlock,
        path: String,
        authority: String,
        timeout: GRPCTimeout?,
        common: HTTP2HeaderBlock,
        previousAttempts: String?,
        bearerToken: String?,
        trailing: HTTP2HeaderBlock
    ) {
        self.leading = leading
        self.path = path
        self.authority = authority
        self.timeout = timeout
        self.common = common
        self.previousAttempts = previousAttempts
        self.bearerToken = bearerToken
        self.trailing = trailing
    }

    /// Appends every field, in wire order, to `block`.
    func write(into block: inout HTTP2HeaderBlock) {
        block.append(contentsOf: leading)
        block.append(literalName: ":path", value: path, sensitive: false)
        block.append(literalName: ":authority", value: authority, sensitive: false)
        if let timeout {
            block.append(literalName: "grpc-timeout", valueCount: timeout.byteCount) { timeout.write(to: $0) }
        }
        block.append(contentsOf: common)
        if let previousAttempts {
            block.append(literalName: "grpc-previous-rpc-attempts", value: previousAttempts, sensitive: false)
        }
        if let bearerToken {
            block.append(literalName: "authorization", value: "Bearer ", valueSuffix: bearerToken, sensitive: true)
        }
        block.append(contentsOf: trailing)
    }
}
