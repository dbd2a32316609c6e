internal import AuthRPCSystem

/// One bidirectional stream: the mailbox its caller and the I/O thread share, and the state of
/// the exchange that only the I/O thread touches.
///
/// `@unchecked Sendable`: `mailbox` is a `Locked`; every other mutable property is read and
/// written only by the connection's I/O thread (in commands it takes and the nghttp2 callbacks
/// they and its reads trigger). The header block and the limits are set before the stream is
/// handed over and never change.
final class StreamingCall: @unchecked Sendable {
    let limits: HTTP2StreamLimits
    let mailbox = Locked(StreamingMailbox())

    // The I/O thread's own.
    /// The request's header fields; let go once nghttp2 has copied them.
    var headerBlock: HTTP2HeaderBlock
    /// The stream id nghttp2 assigned, or -1 before submission.
    var id: Int32 = -1
    /// The caller has been told how the stream ended.
    var isFinished = false
    /// END_STREAM left with the last DATA frame.
    var localEnded = false
    var remoteEnded = false
    var resetByServer = false
    var protocolViolation: String?
    var deframer: MessageDeframer

    // The response header block being received.
    var status = 0
    var fields: [HTTP2HeaderField] = []
    var sawFinalHeaders = false
    var inInformationalBlock = false
    var informationalBlocks = 0
    var headerBlockSize = 0

    init(headerBlock: HTTP2HeaderBlock, limits: HTTP2StreamLimits) {
        self.headerBlock = headerBlock
        self.limits = limits
        self.deframer = MessageDeframer(maxMessageBytes: limits.maxMessageBytes)
    }

    /// Queues a received event and wakes the reader. Returns false when the reader has let
    /// `limits.maxQueuedMessages` messages pile up.
    func deliver(_ event: HTTP2StreamEvent) -> Bool {
        let (accepted, waiter) = mailbox.withLock { box -> (Bool, UnsafeContinuation<Void, Never>?) in
            if case .message = event {
                guard box.queuedMessages < limits.maxQueuedMessages else { return (false, nil) }
                box.queuedMessages += 1
            }
            box.events.append(event)
            defer { box.waiter = nil }
            return (true, box.waiter)
        }
        waiter?.resume()
        return accepted
    }

    /// Ends the stream for its reader (once): the events already queued are still read first.
    func finish(_ result: Result<Void, TransportFailure>) {
        guard !isFinished else { return }
        isFinished = true
        let waiter = mailbox.withLock { box -> UnsafeContinuation<Void, Never>? in
            box.end = result
            // What is still unsent never leaves now.
            box.unsent = []
            box.unsentStart = 0
            defer { box.waiter = nil }
            return box.waiter
        }
        waiter?.resume()
    }
}
