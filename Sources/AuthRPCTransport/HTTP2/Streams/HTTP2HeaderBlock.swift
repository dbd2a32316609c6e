/// A request's header fields, pseudo-headers first, laid out in one byte buffer the way the I/O
/// thread hands them to nghttp2: per field a sensitivity byte, the name and value lengths
/// (4 bytes each, little-endian), then the name and value bytes.
///
/// Building a block costs one buffer, however many fields it holds, and a block of fields that
/// never change (built once) is copied into a call's block with one `memcpy`: no per-field
/// `String` or array.
package struct HTTP2HeaderBlock: Sendable {
    private var bytes: [UInt8] = []

    /// An empty block.
    package init() {}

    /// The bytes every field costs besides its name and value.
    private static let fieldOverhead = 9

    /// Room for `byteCount` bytes of names and values in `fields` fields, so the appends that
    /// follow do not grow the buffer.
    package mutating func reserveCapacity(fields: Int, byteCount: Int) {
        bytes.reserveCapacity(bytes.count + fields * Self.fieldOverhead + byteCount)
    }

    /// Fields whose value is a credential (`authorization`, `cookie`): nghttp2 is told never to
    /// index them, so their bytes cannot be probed through HPACK compression and do not outlive
    /// the call in the encoder's table.
    static func isSensitive(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        name.equals("authorization") || name.equals("cookie")
    }

    /// Appends one field; its value is the concatenation of `value` and `valueSuffix` (so
    /// `Bearer <token>` needs no joined `String`).
    package mutating func append(name: String, value: String, valueSuffix: String = "") {
        Self.withBytes(of: name) { name in
            Self.withBytes(of: value) { value in
                Self.withBytes(of: valueSuffix) { suffix in
                    appendField(name: name, valueParts: value, suffix, sensitive: Self.isSensitive(name))
                }
            }
        }
    }

    /// A string's UTF-8 bytes, read in place when they are contiguous (a native string's always
    /// are); a `var` copy for `withUTF8` would retain and release each string of every call.
    private static func withBytes<Result>(
        of text: String,
        _ body: (UnsafeBufferPointer<UInt8>) -> Result
    ) -> Result {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = text
        return copy.withUTF8(body)
    }

    /// Appends every field of `other`, in order.
    package mutating func append(contentsOf other: HTTP2HeaderBlock) {
        bytes.append(contentsOf: other.bytes)
    }

    /// The bytes the block's buffer has room for.
    var capacity: Int { bytes.capacity }

    /// Empties the block, keeping its buffer for the next fields.
    mutating func removeAll(keepingCapacity: Bool) {
        bytes.removeAll(keepingCapacity: keepingCapacity)
    }

    private mutating func appendField(
        name: UnsafeBufferPointer<UInt8>,
        valueParts value: UnsafeBufferPointer<UInt8>,
        _ suffix: UnsafeBufferPointer<UInt8>,
        sensitive: Bool
    ) {
        bytes.append(sensitive ? 1 : 0)
        appendLength(name.count)
        appendLength(value.count + suffix.count)
        bytes.append(contentsOf: name)
        bytes.append(contentsOf: value)
        bytes.append(contentsOf: suffix)
    }

    private mutating func appendLength(_ length: Int) {
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: length).littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// One field, pointing into the block's buffer.
    struct Field {
        var name: UnsafeBufferPointer<UInt8>
        var value: UnsafeBufferPointer<UInt8>
        var sensitive: Bool
    }

    /// The fields in order, valid only inside `withFields`.
    struct Fields: Sequence, IteratorProtocol {
        fileprivate let buffer: UnsafeBufferPointer<UInt8>
        fileprivate var offset = 0

        mutating func next() -> Field? {
            guard offset < buffer.count, let base = buffer.baseAddress else { return nil }
            let nameLength = Self.length(base, at: offset + 1)
            let valueLength = Self.length(base, at: offset + 5)
            let nameStart = offset + HTTP2HeaderBlock.fieldOverhead
            let valueStart = nameStart + nameLength
            let sensitive = base[offset] != 0
            offset = valueStart + valueLength
            return Field(
                name: UnsafeBufferPointer(start: base + nameStart, count: nameLength),
                value: UnsafeBufferPointer(start: base + valueStart, count: valueLength),
                sensitive: sensitive
            )
        }

        /// How many fields there are (from the current one on), read from their lengths alone.
        var count: Int {
            guard let base = buffer.baseAddress else { return 0 }
            var count = 0
            var offset = offset
            while offset < buffer.count {
                offset +=
                    HTTP2HeaderBlock.fieldOverhead + Self.length(base, at: offset + 1)
                    + Self.length(base, at: offset + 5)
                count += 1
            }
            return count
        }

        /// A length as `appendLength` wrote it: four bytes, little-endian, at any alignment.
        private static func length(_ base: UnsafePointer<UInt8>, at offset: Int) -> Int {
            Int(UInt32(littleEndian: UnsafeRawPointer(base + offset).loadUnaligned(as: UInt32.self)))
        }
    }

    /// Calls `body` with the fields in order; the pointers are valid only during the call.
    func withFields<Result>(_ body: (Fields) -> Result) -> Result {
        bytes.withUnsafeBufferPointer { body(Fields(buffer: $0)) }
    }
}
