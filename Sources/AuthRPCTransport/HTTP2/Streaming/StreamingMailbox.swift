/// What a bidirectional stream's caller and the connection's I/O thread hand each other, under
/// the stream's lock: the framed messages still to send, and the events still to read.
struct StreamingMailbox {
    /// Framed messages not yet taken by nghttp2, from `unsentStart` on.
    var unsent: [UInt8] = []
    var unsentStart = 0
    /// The caller has ended its side: END_STREAM goes with the last unsent byte.
    var endRequested = false
    /// The body provider said "nothing yet" (NGHTTP2_ERR_DEFERRED): the next send must ask the
    /// I/O thread to resume it.
    var deferred = false

    /// Received events not yet read, from `eventsStart` on.
    var events: [HTTP2StreamEvent] = []
    var eventsStart = 0
    var queuedMessages = 0
    /// How the stream ended, read once `events` is drained: nil while it runs.
    var end: Result<Void, TransportFailure>?
    /// The reader waiting for an event.
    var waiter: UnsafeContinuation<Void, Never>?
    /// Bytes of messages read whose stream window has not been given back yet.
    var unreturnedBytes = 0

    var unsentCount: Int { unsent.count - unsentStart }

    /// Takes the next event, compacting the queue once it is drained.
    mutating func takeEvent() -> HTTP2StreamEvent? {
        guard eventsStart < events.count else { return nil }
        let event = events[eventsStart]
        eventsStart += 1
        if eventsStart == events.count {
            events.removeAll(keepingCapacity: events.capacity <= 64)
            eventsStart = 0
        }
        if case .message = event { queuedMessages -= 1 }
        return event
    }

    /// Copies up to `count` unsent bytes to `buffer`; returns how many.
    mutating func takeUnsent(into buffer: UnsafeMutablePointer<UInt8>, count: Int) -> Int {
        let taken = min(count, unsentCount)
        guard taken > 0 else { return 0 }
        unsent.withUnsafeBufferPointer { bytes in
            buffer.update(from: bytes.baseAddress! + unsentStart, count: taken)
        }
        unsentStart += taken
        if unsentStart == unsent.count {
            unsent.removeAll(keepingCapacity: unsent.capacity <= 64 << 10)
            unsentStart = 0
        } else if unsentStart > 64 << 10 && unsentStart * 2 > unsent.count {
            unsent.removeFirst(unsentStart)
            unsentStart = 0
        }
        return taken
    }
}
