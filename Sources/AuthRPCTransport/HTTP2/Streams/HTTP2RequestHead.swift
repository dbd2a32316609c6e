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

    /// Appends every field, in wire order, to `block`: their room is counted first, so the block
    /// grows and counts its fields once.
    func write(into block: inout HTTP2HeaderBlock) {
        var room = HTTP2HeaderBlock.Room()
        room.add(leading)
        room.add(name: ":path", valueCount: path.utf8.count)
        room.add(name: ":authority", valueCount: authority.utf8.count)
        if let timeout { room.add(name: "grpc-timeout", valueCount: timeout.byteCount) }
        room.add(common)
        if let previousAttempts {
            room.add(name: "grpc-previous-rpc-attempts", valueCount: previousAttempts.utf8.count)
        }
        if let bearerToken {
            room.add(name: "authorization", valueCount: Self.bearer.utf8.count + bearerToken.utf8.count)
        }
        room.add(trailing)
        block.append(room) { fields in
            fields.append(contentsOf: leading)
            fields.append(name: ":path", value: path, sensitive: false)
            fields.append(name: ":authority", value: authority, sensitive: false)
            if let timeout {
                fields.append(name: "grpc-timeout", valueCount: timeout.byteCount) { timeout.write(to: $0) }
            }
            fields.append(contentsOf: common)
            if let previousAttempts {
                fields.append(name: "grpc-previous-rpc-attempts", value: previousAttempts, sensitive: false)
            }
            if let bearerToken {
                fields.append(name: "authorization", value: Self.bearer, valueSuffix: bearerToken, sensitive: true)
            }
            fields.append(contentsOf: trailing)
        }
    }

    /// The `authorization` value's prefix; the token follows it.
    private static var bearer: String { "Bearer " }
}
