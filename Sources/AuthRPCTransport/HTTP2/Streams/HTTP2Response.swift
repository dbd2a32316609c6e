/// A complete response: the final header block, the body, and the trailing header block.
package struct HTTP2Response: Sendable {
    /// The `:status` of the final (non-1xx) header block.
    package var status: Int
    /// The final header block's regular fields (pseudo-headers removed), in received order.
    ///
    /// Each block has an array of its own, so that the caller can keep either whole as it is
    /// (gRPC's response metadata shares it) rather than copy its part out of one buffer.
    package var headers: [HTTP2HeaderField]
    /// Every DATA byte received, concatenated.
    package var body: [UInt8]
    /// The trailing header block, empty when the response ended without one.
    package var trailers: [HTTP2HeaderField]
    /// `true` when the final header block also ended the stream (no body, no trailers).
    package var endedWithHeaders: Bool

    package init(
        status: Int,
        headers: [HTTP2HeaderField],
        body: [UInt8],
        trailers: [HTTP2HeaderField],
        endedWithHeaders: Bool
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.trailers = trailers
        self.endedWithHeaders = endedWithHeaders
    }
}
