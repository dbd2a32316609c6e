/// A request sent on its own HTTP/2 stream: one header block and a complete body.
package struct HTTP2Request: Sendable {
    /// `:method`.
    package var method: String
    /// `:scheme` (`https` or `http`).
    package var scheme: String
    /// `:authority`.
    package var authority: String
    /// `:path`.
    package var path: String
    /// Regular header fields, sent after the pseudo-headers in this order.
    package var headers: [HTTP2HeaderField]
    /// The whole request body, sent in DATA frames; the last one carries END_STREAM (an empty
    /// body is one empty DATA frame with END_STREAM).
    package var body: [UInt8]
    /// When the stream must be given up: it is reset with CANCEL and the send fails
    /// ``HTTP2Error/deadlineExceeded``.
    package var deadline: ContinuousClock.Instant?
    /// The most response body bytes to accept; beyond it the stream is reset with CANCEL and the
    /// send fails ``HTTP2Error/responseBodyTooLarge(limit:)`` without buffering the rest.
    package var maxResponseBodyBytes: Int

    package init(
        method: String = "POST",
        scheme: String,
        authority: String,
        path: String,
        headers: [HTTP2HeaderField],
        body: [UInt8],
        deadline: ContinuousClock.Instant? = nil,
        maxResponseBodyBytes: Int = .max
    ) {
        self.method = method
        self.scheme = scheme
        self.authority = authority
        self.path = path
        self.headers = headers
        self.body = body
        self.deadline = deadline
        self.maxResponseBodyBytes = maxResponseBodyBytes
    }
}
