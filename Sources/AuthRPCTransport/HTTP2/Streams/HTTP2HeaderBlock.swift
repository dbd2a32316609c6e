/// A request's header fields, pseudo-headers first, laid out in one byte buffer the way the I/O
/// thread hands them to nghttp2: per field a sensitivity byte, the name and value lengths
/// (4 bytes each, little-endian), then the name and value bytes.
///
/// Building a block costs one buffer, however many fields it holds, and a block of fields that
/// never change (built once) is copied into a call's block with one `memcpy`: no per-field
/// `String` or array. A field is written in place: its room is made once (the buffer is zeroed
/// only when it grows, which a reused block stops doing after its first call) and its bytes are
/// copied straight from the strings' storage, not appended piece by piece.
package struct HTTP2HeaderBlock: Sendable {
    /// The fields in the first `count` bytes; the rest is room for more, already initialized.
    private var storage: [UInt8] = []
    private var count = 0
    /// How many fields the block holds (nghttp2's list is sized by it before the walk).
    private(set) var fieldCount = 0

    /// An empty block.
    package init() {}

    /// The bytes every field costs besides its name and value.
    private static let fieldOverhead = 9

    /// Room for `byteCount` bytes of names and values in `fields` fields, so the appends that
    /// follow do not grow the buffer.
    package mutating func reserveCapacity(fields: Int, byteCount: Int) {
        let size = count + fields * Self.fieldOverhead + byteCount
        if size > storage.count { grow(to: size) }
    }

    /// Fields whose value is a credential (`authorization`, `cookie`): nghttp2 is told never to
    /// index them, so their bytes cannot be probed through HPACK compression and do not outlive
    /// the call in the encoder's table.
    static func isSensitive(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        name.equals("authorization") || name.equals("cookie")
    }

    /// Appends one field; its value is the concatenation of `value` and `valueSuffix` (so
    /// `Bearer <token>` needs no joined `String`). A name that carries a credential is marked
    /// sensitive (see ``isSensitive(_:)``).
    package mutating func append(name: String, value: String, valueSuffix: String = "") {
        let nameCount = name.utf8.count
        let field = makeRoom(nameCount: nameCount, valueCount: value.utf8.count + valueSuffix.utf8.count)
        storage.withUnsafeMutableBytes { raw in
            let nameStart = raw.baseAddress! + field + Self.fieldOverhead
            let valueStart = nameStart + Self.copy(name, to: nameStart)
            Self.copy(valueSuffix, to: valueStart + Self.copy(value, to: valueStart))
            let nameBytes = UnsafeBufferPointer(start: nameStart.assumingMemoryBound(to: UInt8.self), count: nameCount)
            raw[field] = Self.isSensitive(nameBytes) ? 1 : 0
        }
    }

    /// Appends one field whose name is a literal and whose sensitivity the caller knows: the
    /// per-call fields of a gRPC request, without comparing the name.
    mutating func append(literalName name: StaticString, value: String, valueSuffix: String = "", sensitive: Bool) {
        let field = makeRoom(
            nameCount: name.utf8CodeUnitCount,
            valueCount: value.utf8.count + valueSuffix.utf8.count
        )
        storage.withUnsafeMutableBytes { raw in
            raw[field] = sensitive ? 1 : 0
            let nameStart = raw.baseAddress! + field + Self.fieldOverhead
            nameStart.copyMemory(from: name.utf8Start, byteCount: name.utf8CodeUnitCount)
            let valueStart = nameStart + name.utf8CodeUnitCount
            Self.copy(valueSuffix, to: valueStart + Self.copy(value, to: valueStart))
        }
    }

    /// Appends every field of `other`, in order.
    package mutating func append(contentsOf other: HTTP2HeaderBlock) {
        guard other.count > 0 else { return }
        let start = extend(by: other.count)
        fieldCount += other.fieldCount
        other.storage.withUnsafeBytes { source in
            storage.withUnsafeMutableBytes { raw in
                (raw.baseAddress! + start).copyMemory(from: source.baseAddress!, byteCount: other.count)
            }
        }
    }

    /// The bytes the block's buffer has room for.
    var capacity: Int { storage.count }

    /// Empties the block, keeping its buffer for the next fields.
    mutating func removeAll(keepingCapacity: Bool) {
        count = 0
        fieldCount = 0
        if !keepingCapacity { storage = [] }
    }

    /// Makes room for a field with names and values of these lengths, writes its lengths, and
    /// returns where the field starts; the caller writes the sensitivity byte, name and value.
    private mutating func makeRoom(nameCount: Int, valueCount: Int) -> Int {
        let field = extend(by: Self.fieldOverhead + nameCount + valueCount)
        fieldCount += 1
        storage.withUnsafeMutableBytes { raw in
            raw.storeBytes(
                of: UInt32(truncatingIfNeeded: nameCount).littleEndian,
                toByteOffset: field + 1,
                as: UInt32.self
            )
            raw.storeBytes(
                of: UInt32(truncatingIfNeeded: valueCount).littleEndian,
                toByteOffset: field + 5,
                as: UInt32.self
            )
        }
        return field
    }

    /// Counts `byteCount` more bytes as the block's, growing the buffer when they do not fit,
    /// and returns where they start.
    private mutating func extend(by byteCount: Int) -> Int {
        let start = count
        count += byteCount
        if count > storage.count { grow(to: count) }
        return start
    }

    /// Grows the buffer to at least `size` bytes (at least doubling it, so a block built field by
    /// field grows a logarithmic number of times).
    @inline(never)
    private mutating func grow(to size: Int) {
        let target = Swift.max(size, storage.count * 2, 64)
        storage.append(contentsOf: repeatElement(0, count: target - storage.count))
    }

    /// Copies a string's UTF-8 bytes to `destination` (the standard library copies a native
    /// string's storage, or a small string's inline bytes, with one `memcpy`) and returns how
    /// many there were.
    @discardableResult
    private static func copy(_ text: String, to destination: UnsafeMutableRawPointer) -> Int {
        let count = text.utf8.count
        UnsafeMutableRawBufferPointer(start: destination, count: count).copyBytes(from: text.utf8)
        return count
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

        /// A length as `makeRoom` wrote it: four bytes, little-endian, at any alignment.
        private static func length(_ base: UnsafePointer<UInt8>, at offset: Int) -> Int {
            Int(UInt32(littleEndian: UnsafeRawPointer(base + offset).loadUnaligned(as: UInt32.self)))
        }
    }

    /// Calls `body` with the fields in order; the pointers are valid only during the call.
    func withFields<Result>(_ body: (Fields) -> Result) -> Result {
        storage.withUnsafeBufferPointer { body(Fields(buffer: UnsafeBufferPointer(rebasing: $0[..<count]))) }
    }
}
