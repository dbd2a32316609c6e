/// Splits a stream's DATA bytes into gRPC length-prefixed messages (a flag byte, a 4-byte
/// big-endian length, the payload), however the frames cut them.
struct MessageDeframer {
    /// Why the bytes cannot be messages.
    enum Failure: Error {
        case tooLarge(limit: Int)
        case compressed
        case badFlag(UInt8)
        /// The receiver would not take another message (its queue is full).
        case tooMany
    }

    let maxMessageBytes: Int
    private var prefix: [UInt8] = []
    private var payload: [UInt8] = []
    /// The payload length of the message being read, once its prefix is complete.
    private var expected: Int?

    init(maxMessageBytes: Int) {
        self.maxMessageBytes = maxMessageBytes
    }

    /// Whether bytes of an unfinished message are held (a stream ending now ended mid-message).
    var holdsPartialMessage: Bool { !prefix.isEmpty || expected != nil }

    /// Feeds `bytes` and hands every message they complete to `deliver`.
    mutating func feed(
        _ bytes: UnsafeRawBufferPointer,
        deliver: ([UInt8]) throws(Failure) -> Void
    ) throws(Failure) {
        var offset = 0
        while offset < bytes.count {
            guard let length = expected else {
                let take = min(GRPCMessagePrefix.byteCount - prefix.count, bytes.count - offset)
                prefix.append(contentsOf: bytes[offset..<offset + take])
                offset += take
                if prefix.count == GRPCMessagePrefix.byteCount { try startMessage() }
                if expected == 0 { try finishMessage(deliver) }
                continue
            }
            let take = min(length - payload.count, bytes.count - offset)
            payload.append(contentsOf: bytes[offset..<offset + take])
            offset += take
            if payload.count == length { try finishMessage(deliver) }
        }
    }

    private mutating func startMessage() throws(Failure) {
        switch prefix[0] {
        case 0: break
        // This client never offers compression (no grpc-accept-encoding), so none may come.
        case 1: throw .compressed
        default: throw .badFlag(prefix[0])
        }
        let length = GRPCMessagePrefix.payloadLength(prefix)
        guard length <= maxMessageBytes else { throw .tooLarge(limit: maxMessageBytes) }
        expected = length
        payload.reserveCapacity(length)
    }

    private mutating func finishMessage(_ deliver: ([UInt8]) throws(Failure) -> Void) throws(Failure) {
        let message = payload
        payload = []
        prefix.removeAll(keepingCapacity: true)
        expected = nil
        try deliver(message)
    }
}
