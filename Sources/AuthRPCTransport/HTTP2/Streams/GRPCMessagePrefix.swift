/// The prefix gRPC puts before each message: a flag byte (1 when the payload is compressed),
/// then the payload's length as a 4-byte big-endian integer. The transport's one reader of it.
enum GRPCMessagePrefix {
    /// The prefix's size in bytes.
    static let byteCount = 5

    /// The payload length `prefix` declares; `prefix` holds at least ``byteCount`` bytes.
    static func payloadLength(_ prefix: some Collection<UInt8>) -> Int {
        prefix.dropFirst().prefix(4).reduce(0) { $0 << 8 | Int($1) }
    }
}
