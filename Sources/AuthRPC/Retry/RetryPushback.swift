/// What a server's `grpc-retry-pushback-ms` says about retrying (gRFC A6, "Pushback").
enum RetryPushback: Sendable, Equatable {
    /// Retry after exactly this long (instead of the policy's backoff).
    case retryAfter(Duration)
    /// Do not retry: the value was negative or did not parse.
    case stop

    /// The trailer's key.
    static let key = "grpc-retry-pushback-ms"

    /// The pushback in `metadata` (the first value when there are several), or nil when there is
    /// none. The value is an ASCII signed 32-bit number of milliseconds; anything else (a sign
    /// without digits, spaces, a fraction, a number out of range) asks not to retry, as a
    /// negative one does.
    init?(_ metadata: Metadata) {
        guard let text = metadata.firstString(forKey: Self.key) else { return nil }
        self.init(parsing: text)
    }

    /// Parses one value (see ``init(_:)``).
    init(parsing text: String) {
        let bytes = text.utf8
        let digits = bytes.first == UInt8(ascii: "-") ? bytes.dropFirst() : bytes[...]
        guard !digits.isEmpty, digits.count <= 10,
            digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let milliseconds = Int32(text), milliseconds >= 0
        else {
            self = .stop
            return
        }
        self = .retryAfter(.milliseconds(milliseconds))
    }
}
