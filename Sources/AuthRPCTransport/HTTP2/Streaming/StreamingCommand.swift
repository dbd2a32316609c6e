/// What a bidirectional stream's caller asks of the I/O thread.
enum StreamingCommand {
    /// Open the stream (HEADERS, then DATA as the caller sends).
    case open(StreamingCall)
    /// The caller sent more (or ended its side) after nghttp2 had found nothing to send.
    case resume(StreamingCall)
    /// The reader took this many bytes of messages: give them back to the stream's window.
    case consumed(StreamingCall, Int)
    /// Reset the stream with CANCEL; the reader then sees ``TransportFailure/cancelled``.
    case cancel(StreamingCall)
}

extension ConnectionCommand {
    /// Whether the command opens a stream, and so is refused once the connection takes no more.
    var opensStream: Bool {
        switch self {
        case .submit, .streaming(.open): return true
        default: return false
        }
    }
}
