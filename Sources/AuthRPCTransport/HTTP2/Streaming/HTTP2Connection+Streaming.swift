extension HTTP2Connection {
    /// Opens a bidirectional stream with `headers` (pseudo-headers first, as
    /// ``HTTP2Request/headerBlock`` holds them): HEADERS leave at once, messages as they are sent.
    /// The stream is opened on the I/O thread; a connection that no longer takes streams fails
    /// it, and ``HTTP2BidirectionalStream/next()`` throws why.
    package func openStream(
        headers: HTTP2HeaderBlock,
        limits: HTTP2StreamLimits = HTTP2StreamLimits()
    ) -> HTTP2BidirectionalStream {
        let call = StreamingCall(headerBlock: headers, limits: limits)
        if let refusal = loop.enqueue(.streaming(.open(call))) {
            call.finish(.failure(refusal))
        }
        return HTTP2BidirectionalStream(loop: loop, call: call)
    }
}
