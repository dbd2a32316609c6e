internal import AuthRPCSystem

/// A bidirectional HTTP/2 stream carrying gRPC length-prefixed messages both ways: the transport
/// under a long-lived streaming call (the xDS ADS stream), package-level only.
///
/// Open one with ``HTTP2Connection/openStream(headers:limits:)``. ``send(_:endStream:)`` queues
/// a message at any time (it never waits); ``next()`` reads what the server sent, one
/// ``HTTP2StreamEvent`` at a time, from one task at a time. ``cancel()`` (or letting go of the
/// stream before it ended) resets it with CANCEL. Everything held is bounded by
/// ``HTTP2StreamLimits`` and by flow control: a reader that falls behind makes the server wait.
package final class HTTP2BidirectionalStream: Sendable {
    let loop: ConnectionLoop
    let call: StreamingCall

    init(loop: ConnectionLoop, call: StreamingCall) {
        self.loop = loop
        self.call = call
    }

    /// Nobody can read or send any more: reset the stream unless it has ended.
    deinit {
        cancel()
    }

    /// Queues `message` with its 5-byte prefix (uncompressed); with `endStream`, the caller's
    /// side ends after it (END_STREAM). Throws ``TransportFailure/invalidRequest(_:)`` after the
    /// caller's side has ended or when the unsent bytes would pass
    /// ``HTTP2StreamLimits/maxUnsentBytes``, and the stream's failure once it has ended.
    package func send(_ message: [UInt8], endStream: Bool = false) throws(TransportFailure) {
        try enqueue(message, endStream: endStream)
    }

    /// Ends the caller's side (an empty DATA frame with END_STREAM, or END_STREAM on the last
    /// unsent message); the server's side goes on until it ends it.
    package func finish() throws(TransportFailure) {
        try enqueue(nil, endStream: true)
    }

    private func enqueue(_ message: [UInt8]?, endStream: Bool) throws(TransportFailure) {
        let limit = call.limits.maxUnsentBytes
        let resume = try call.mailbox.withLock { box throws(TransportFailure) -> Bool in
            if case .failure(let error) = box.end { throw error }
            guard box.end == nil else { throw .invalidRequest("the stream has ended") }
            guard !box.endRequested else { throw .invalidRequest("the stream's sending side has ended") }
            if let message {
                guard message.count <= UInt32.max, box.unsentCount + 5 + message.count <= limit else {
                    throw .invalidRequest("more than \(limit) bytes would wait unsent on the stream")
                }
                let length = UInt32(message.count)
                box.unsent.append(0)
                box.unsent.append(contentsOf: [
                    UInt8(length >> 24), UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff),
                ])
                box.unsent.append(contentsOf: message)
            }
            if endStream { box.endRequested = true }
            defer { box.deferred = false }
            return box.deferred
        }
        if resume { _ = loop.enqueue(.streaming(.resume(call))) }
    }

    /// The next event from the server, or nil once the server's side has ended and every event
    /// was read. Throws how the stream failed (after the events received before the failure).
    /// Cancelling the waiting task cancels the stream.
    package func next() async throws(TransportFailure) -> HTTP2StreamEvent? {
        while true {
            let (event, end, returned) = call.mailbox.withLock { box in
                let event = box.takeEvent()
                var returned = 0
                if case .message(let payload) = event {
                    box.unreturnedBytes += 5 + payload.count
                    // Given back in batches, and at once when the reader has caught up, so a
                    // window never waits on bytes already read.
                    if box.unreturnedBytes >= Self.windowReturnBatch || box.queuedMessages == 0 {
                        returned = box.unreturnedBytes
                        box.unreturnedBytes = 0
                    }
                }
                return (event, event == nil ? box.end : nil, returned)
            }
            if returned > 0, end == nil { _ = loop.enqueue(.streaming(.consumed(call, returned))) }
            if let event { return event }
            switch end {
            case .success: return nil
            case .failure(let error): throw error
            case nil: break
            }
            await withTaskCancellationHandler {
                await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                    let ready = call.mailbox.withLock { box -> Bool in
                        if box.eventsStart < box.events.count || box.end != nil { return true }
                        precondition(box.waiter == nil, "one reader at a time")
                        box.waiter = continuation
                        return false
                    }
                    if ready { continuation.resume() }
                }
            } onCancel: {
                cancel()
            }
        }
    }

    /// How many read bytes are given back to the stream's window at once.
    static let windowReturnBatch = 16 << 10

    /// Resets the stream with CANCEL (nothing once it has ended); ``next()`` then throws
    /// ``TransportFailure/cancelled`` after the events already received.
    package func cancel() {
        _ = loop.enqueue(.streaming(.cancel(call)))
    }

    /// Received messages waiting to be read: what tests read to see flow control hold a server
    /// back.
    package var queuedMessages: Int {
        call.mailbox.withLock { $0.queuedMessages }
    }
}
