import AuthRPCSyntax

/// gRPC metadata: an ordered multimap of lowercase keys to text or binary values.
///
/// Keys ending in `-bin` carry bytes (base64 on the wire); all other keys carry printable ASCII.
/// Order and duplicates are kept, both for what is sent and for what was received. Metadata is
/// checked when a call starts: a key or value gRPC does not allow fails the call with
/// `invalidArgument` before anything is sent.
public struct Metadata: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One metadata value.
    public enum Value: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
        /// Printable ASCII text, for keys not ending in `-bin`.
        case string(String)
        /// Bytes, for keys ending in `-bin`.
        case binary([UInt8])

        /// A text value from a literal.
        public init(stringLiteral text: String) {
            self = .string(text)
        }

        /// The text, or the bytes in base64.
        public var description: String {
            switch self {
            case .string(let text): return text
            case .binary(let bytes): return Base64Codec.standard.encode(bytes, padded: true)
            }
        }
    }

    /// One key-value pair.
    public typealias Element = (key: String, value: Value)

    /// Where the pairs live: added ones, or a received header block's fields (``Storage``).
    private(set) var storage: Storage

    /// The pairs, for reading.
    private var elements: Pairs { Pairs(storage: storage) }

    /// Empty metadata.
    public init() {
        storage = .pairs([])
    }

    /// Metadata from a literal: `["x-request-id": "42", "trace-bin": .binary([1, 2])]`.
    public init(dictionaryLiteral pairs: (String, Value)...) {
        storage = .pairs(pairs.map { (key: $0.0, value: $0.1) })
    }

    /// Metadata over `storage` as it is.
    init(storage: Storage) {
        self.storage = storage
    }

    /// Changes the pairs in place, copying received ones out first.
    private mutating func modify<Result>(_ body: (inout [Element]) -> Result) -> Result {
        var pairs: [Element]
        switch storage {
        case .pairs(let stored): pairs = stored
        case .received: pairs = Array(elements)
        }
        storage = .pairs([])  // so that `pairs` is the array's only reference, changed in place
        defer { storage = .pairs(pairs) }
        return body(&pairs)
    }

    /// The number of pairs.
    public var count: Int { elements.count }
    /// `true` when there is no pair.
    public var isEmpty: Bool { elements.isEmpty }

    /// Appends a text value.
    public mutating func addString(_ value: String, forKey key: String) {
        modify { $0.append((key: key, value: .string(value))) }
    }

    /// Appends a binary value (the key must end in `-bin`).
    public mutating func addBinary(_ value: [UInt8], forKey key: String) {
        modify { $0.append((key: key, value: .binary(value))) }
    }

    /// Appends a value of either kind.
    public mutating func add(_ value: Value, forKey key: String) {
        modify { $0.append((key: key, value: value)) }
    }

    /// Removes every value under `key`.
    public mutating func removeAll(forKey key: String) {
        modify { $0.removeAll { $0.key == key } }
    }

    /// Replaces every value under `key` with one text value.
    public mutating func replaceOrAddString(_ value: String, forKey key: String) {
        removeAll(forKey: key)
        addString(value, forKey: key)
    }

    /// Every value under `key`, in order.
    public subscript(key: String) -> [Value] {
        elements.compactMap { $0.key == key ? $0.value : nil }
    }

    /// The first text value under `key`.
    public func firstString(forKey key: String) -> String? {
        // Received fields are all text (see `Storage.received`): compared as they are, without
        // making a pair of each.
        if case .received(let fields) = storage { return Self.firstValue(forKey: key, in: fields) }
        for element in elements where element.key == key {
            if case .string(let text) = element.value { return text }
        }
        return nil
    }

    /// The first binary value under `key`.
    public func firstBinary(forKey key: String) -> [UInt8]? {
        for element in elements where element.key == key {
            if case .binary(let bytes) = element.value { return bytes }
        }
        return nil
    }

    /// Every text value under `key`, in order.
    public func strings(forKey key: String) -> [String] {
        elements.compactMap { element in
            guard element.key == key, case .string(let text) = element.value else { return nil }
            return text
        }
    }

    /// Every binary value under `key`, in order.
    public func binaries(forKey key: String) -> [[UInt8]] {
        elements.compactMap { element in
            guard element.key == key, case .binary(let bytes) = element.value else { return nil }
            return bytes
        }
    }

    /// `true` when some pair has `key`.
    public func contains(key: String) -> Bool {
        elements.contains { $0.key == key }
    }

    /// The pairs in order, duplicates included.
    public func makeIterator() -> IndexingIterator<[Element]> {
        switch storage {
        case .pairs(let pairs): pairs.makeIterator()
        case .received: Array(elements).makeIterator()
        }
    }

    /// `true` when both hold the same pairs in the same order.
    public static func == (lhs: Metadata, rhs: Metadata) -> Bool {
        lhs.elements.elementsEqual(rhs.elements) { $0.key == $1.key && $0.value == $1.value }
    }

    /// Hashes the pairs in order, as ``==(_:_:)`` compares them.
    public func hash(into hasher: inout Hasher) {
        for element in elements {
            hasher.combine(element.key)
            hasher.combine(element.value)
        }
    }

    /// `key: value` pairs, with the values of credential-bearing keys redacted.
    public var description: String {
        let pairs = elements.map { element in
            Metadata.isSensitive(element.key) ? "\(element.key): <redacted>" : "\(element.key): \(element.value)"
        }
        return "[" + pairs.joined(separator: ", ") + "]"
    }

    /// Keys whose values are credentials and never printed.
    static func isSensitive(_ key: String) -> Bool {
        key == "authorization" || key == "cookie" || key == "set-cookie" || key == "proxy-authorization"
    }
}

// MARK: - Validation and wire form

extension Metadata {
    /// Header names the library writes itself or HTTP/2 forbids; callers cannot set them.
    private static let reservedKeys: Set<String> = [
        "te", "content-type", "user-agent", "host", "connection", "keep-alive", "proxy-connection",
        "transfer-encoding", "upgrade",
    ]

    /// Checks every pair against gRPC's rules for request metadata, as a call does before
    /// sending anything.
    ///
    /// - Throws: ``RPCError`` with `invalidArgument` naming the first bad pair.
    public func validateForSending() throws(RPCError) {
        for element in elements {
            try Metadata.validate(key: element.key, value: element.value)
        }
    }

    private static func validate(key: String, value: Value) throws(RPCError) {
        func refuse(_ reason: String) -> RPCError {
            RPCError(code: .invalidArgument, message: "invalid metadata key '\(printable(key))': \(reason)")
        }
        guard !key.isEmpty else { throw refuse("keys cannot be empty") }
        guard key.utf8.allSatisfy(isKeyByte) else {
            throw refuse("keys may contain only lowercase letters, digits, '-', '_' and '.'")
        }
        guard !key.hasPrefix("grpc-") else { throw refuse("the 'grpc-' prefix is reserved for gRPC itself") }
        guard !reservedKeys.contains(key) else {
            throw refuse(
                key == "user-agent"
                    ? "set CallOptions.userAgentPrefix instead" : "this header is managed by the library"
            )
        }
        let isBinaryKey = Self.isBinaryKey(key)
        switch value {
        case .binary:
            guard isBinaryKey else { throw refuse("binary values need a key ending in '-bin'") }
        case .string(let text):
            guard !isBinaryKey else { throw refuse("keys ending in '-bin' take binary values") }
            guard text.utf8.allSatisfy({ $0 >= 0x20 && $0 <= 0x7E }) else {
                throw refuse("text values must be printable ASCII (0x20-0x7E); use a '-bin' key for other bytes")
            }
            guard text.utf8.first != 0x20, text.utf8.last != 0x20 else {
                throw refuse("text values cannot start or end with a space")
            }
        }
    }

    /// Whether `key` ends in `-bin`, from its last four bytes read as one word: `hasSuffix`
    /// compares `Character`s, and every received field's name is asked.
    static func isBinaryKey(_ key: String) -> Bool {
        let suffix: UInt32 = 0x6E69_622D  // "-bin", little-endian
        return key.utf8.withContiguousStorageIfAvailable { bytes in
            guard bytes.count >= 4 else { return false }
            let last = UnsafeRawPointer(bytes.baseAddress! + bytes.count - 4).loadUnaligned(as: UInt32.self)
            return UInt32(littleEndian: last) == suffix
        } ?? key.utf8.reversed().starts(with: "nib-".utf8)
    }

    private static func isKeyByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
    }

    /// A key shown in an error: control characters escaped so the message stays one line.
    private static func printable(_ key: String) -> String {
        String(key.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) })
    }

    /// The value as it goes on the wire (binary values in unpadded base64).
    static func wireValue(_ value: Value) -> String {
        switch value {
        case .string(let text): return text
        case .binary(let bytes): return Base64Codec.standard.encode(bytes, padded: false)
        }
    }

    /// Builds metadata from received header fields: `-bin` values split on `,` and base64-decoded
    /// (padded or not); a value that is not valid base64 is kept as text rather than failing the call.
    init<Fields: Sequence>(receivedFields fields: Fields) where Fields.Element == (name: String, value: String) {
        var pairs: [Element] = []
        pairs.reserveCapacity(fields.underestimatedCount)
        for field in fields {
            guard Self.isBinaryKey(field.name) else {
                pairs.append((key: field.name, value: .string(field.value)))
                continue
            }
            for part in field.value.split(separator: ",", omittingEmptySubsequences: false) {
                let trimmed = part.trimmingSpaces()
                if let bytes = Base64Codec.standard.decode(trimmed) {
                    pairs.append((key: field.name, value: .binary(bytes)))
                } else {
                    pairs.append((key: field.name, value: .string(String(trimmed))))
                }
            }
        }
        self.init(storage: .pairs(pairs))
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs (optional whitespace around list items).
    func trimmingSpaces() -> Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result = result.dropFirst() }
        while let last = result.last, last == " " || last == "\t" { result = result.dropLast() }
        return result
    }
}
