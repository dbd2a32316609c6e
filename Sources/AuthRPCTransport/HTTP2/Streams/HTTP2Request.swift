package import AuthRPCSystem

/// A request sent on its own HTTP/2 stream: one header block and a complete body.
package struct HTTP2Request: Sendable {
    /// Every header field in the order sent: the pseudo-headers (`:method`, `:scheme`, `:path`,
    /// `:authority`) first, then the regular fields.
    /// (Empty when `head` is set.)
    package var headerBlock: HTTP2HeaderBlock
    /// The header fields as parts, laid out by the I/O thread into the connection's reused
    /// buffer at submit (a gRPC call's); nil when `headerBlock` holds them.
    package var head: HTTP2RequestHead?
    /// The whole request body, sent in DATA frames; the last one carries END_STREAM (an empty
    /// body is one empty DATA frame with END_STREAM).
    package var body: [UInt8]
    /// The most response body bytes to accept; beyond it the stream is reset with CANCEL and the
    /// send fails ``TransportFailure/responseBodyTooLarge(limit:)`` without buffering the rest.
    package var maxResponseBodyBytes: Int
    /// An empty buffer whose storage the response body starts in (a caller's kept one, see
    /// `ThreadBufferCache`); the stream takes it over when it takes the request. Without
    /// storage, the body is allocated when its first bytes arrive.
    package var responseBuffer: [UInt8]
    /// When the stream must be given up: it is reset with CANCEL and the send fails
    /// ``TransportFailure/deadlineExceeded``. A plain integer on the loop's clock, not a
    /// `ContinuousClock.Instant`: that is resilient, and a request holding one would be copied
    /// and moved through the runtime's generic value witnesses. Last, because it is the one field
    /// with an odd size (9 bytes): the stream that holds the request packs its flags into the
    /// 7 bytes after it (see ``HTTP2Stream``).
    package var deadline: ContinuousTime?
}

// The initializers delegate to the memberwise one, declared apart so that it exists: a struct
// of this many fields whose own initializer assigns its `var`s is built in memory and then
// copied out whole (a retain and a release of every field, per call).
extension HTTP2Request {
    /// A request whose header block, pseudo-headers first, is already built.
    package init(
        headerBlock: HTTP2HeaderBlock,
        body: [UInt8],
        deadline: ContinuousTime? = nil,
        maxResponseBodyBytes: Int = .max
    ) {
        self.init(
            headerBlock: headerBlock,
            head: nil,
            body: body,
            maxResponseBodyBytes: maxResponseBodyBytes,
            responseBuffer: [],
            deadline: deadline
        )
    }

    /// A request whose header fields are laid out from `head` when it is submitted; its
    /// response body starts in `responseBuffer`'s storage.
    package init(
        head: HTTP2RequestHead,
        body: [UInt8],
        deadline: ContinuousTime? = nil,
        maxResponseBodyBytes: Int = .max,
        responseBuffer: [UInt8] = []
    ) {
        self.init(
            headerBlock: HTTP2HeaderBlock(),
            head: head,
            body: body,
            maxResponseBodyBytes: maxResponseBodyBytes,
            responseBuffer: responseBuffer,
            deadline: deadline
        )
    }

    /// A request from its pseudo-header values and regular fields.
    package init(
        method: String = "POST",
        scheme: String,
        authority: String,
        path: String,
        headers: [HTTP2HeaderField],
        body: [UInt8],
        deadline: ContinuousTime? = nil,
        maxResponseBodyBytes: Int = .max
    ) {
        var block = HTTP2HeaderBlock()
        block.append(name: ":method", value: method)
        block.append(name: ":scheme", value: scheme)
        block.append(name: ":path", value: path)
        block.append(name: ":authority", value: authority)
        for field in headers {
            block.append(name: field.name, value: field.value)
        }
        self.init(headerBlock: block, body: body, deadline: deadline, maxResponseBodyBytes: maxResponseBodyBytes)
    }
}
