/// What one bidirectional stream may hold, so a peer (or a caller) can never make it grow
/// without bound.
///
/// Received bytes are also bounded by flow control: a message's bytes are given back to the
/// server's stream window only once the reader has taken the message, so the bytes waiting to be
/// read never exceed the stream's receive window (the connection's
/// ``HTTP2ConnectionConfiguration/initialStreamWindowSize``): a server that writes faster than
/// the reader reads is made to wait, not buffered.
package struct HTTP2StreamLimits: Sendable {
    /// The largest message accepted from the server; a larger one resets the stream with CANCEL
    /// and the stream fails ``TransportFailure/responseBodyTooLarge(limit:)``.
    package var maxMessageBytes = 4 << 20
    /// The most received messages waiting to be read. Flow control bounds their bytes, not their
    /// count (a window of tiny messages); past this the stream is reset and fails.
    package var maxQueuedMessages = 4096
    /// The most bytes given to ``HTTP2BidirectionalStream/send(_:endStream:)`` and not yet taken
    /// by the connection; a send past it fails instead of queueing.
    package var maxUnsentBytes = 4 << 20

    package init() {}
}
