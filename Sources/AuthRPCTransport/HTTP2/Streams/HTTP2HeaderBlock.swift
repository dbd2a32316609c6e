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
    /// The buffer: a header (the fields' byte count, then their number: four bytes each, in the
    /// machine's order), the fields, then room for more, already initialized. Empty for an empty
    /// block. The counts live in the buffer so that a block is one word: a stream keeps three of
    /// them (its request's parts) for as long as its call waits.
    private var storage: [UInt8] = []

    /// An empty block.
    package init() {}

    /// The bytes in front of the fields.
    private static let headerBytes = 8
    /// The bytes every field costs besides its name and value.
    private static let fieldOverhead = 9

    /// The fields' bytes.
    private var count: Int { storage.isEmpty ? 0 : Int(storage.withUnsafeBytes { $0.load(as: UInt32.self) }) }

    /// How many fields the block holds (nghttp2's list is sized by it before the walk).
    var fieldCount: Int {
        storage.isEmpty ? 0 : Int(storage.withUnsafeBytes { $0.load(fromByteOffset: 4, as: UInt32.self) })
    }

    /// Room for `byteCount` bytes of names and values in `fields` fields, so the appends that
    /// follow do not grow the buffer.
    package mutating func reserveCapacity(fields: Int, byteCount: Int) {
        let size = Self.headerBytes + count + fields * Self.fieldOverhead + byteCount
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
            Self.copy(value, valueSuffix, to: nameStart + Self.copy(name, to: nameStart))
            let nameBytes = UnsafeBufferPointer(start: nameStart.assumingMemoryBound(to: UInt8.self), count: nameCount)
            raw[field] = Self.isSensitive(nameBytes) ? 1 : 0
        }
    }

    /// The room fields take in a block, counted before they are written (see
    /// ``append(_:_:)``).
    struct Room {
        fileprivate(set) var fields = 0
        fileprivate(set) var bytes = 0

        /// Room for one field named `name` whose value takes `valueCount` bytes.
        mutating func add(name: StaticString, valueCount: Int) {
            fields += 1
            bytes += HTTP2HeaderBlock.fieldOverhead + name.utf8CodeUnitCount + valueCount
        }

        /// Room for every field of `block`.
        mutating func add(_ block: HTTP2HeaderBlock) {
            fields += block.fieldCount
            bytes += block.count
        }
    }

    /// Writes fields in sequence into room made for them at once, so laying out a request's
    /// fields grows and counts the buffer once, not once per field. Each write checks that it
    /// stays inside the room counted, and the room must be filled exactly.
    struct Writer: ~Copyable {
        private var cursor: UnsafeMutableRawPointer
        private var remaining: Int

        fileprivate init(_ start: UnsafeMutableRawPointer, byteCount: Int) {
            cursor = start
            remaining = byteCount
        }

        fileprivate var isFull: Bool { remaining == 0 }

        /// The next `byteCount` bytes of the room.
        private mutating func take(_ byteCount: Int) -> UnsafeMutableRawPointer {
            precondition(byteCount <= remaining, "a header field written past the room counted for it")
            let start = cursor
            cursor += byteCount
            remaining -= byteCount
            return start
        }

        /// Writes a field's sensitivity byte, its lengths and its name, and returns where its
        /// value goes.
        private mutating func field(name: StaticString, valueCount: Int, sensitive: Bool) -> UnsafeMutableRawPointer {
            let nameCount = name.utf8CodeUnitCount
            let start = take(HTTP2HeaderBlock.fieldOverhead + nameCount + valueCount)
            start.storeBytes(of: sensitive ? 1 : 0, as: UInt8.self)
            HTTP2HeaderBlock.writeLengths(at: start, nameCount: nameCount, valueCount: valueCount)
            let nameStart = start + HTTP2HeaderBlock.fieldOverhead
            nameStart.copyMemory(from: name.utf8Start, byteCount: nameCount)
            return nameStart + nameCount
        }

        /// Writes one field whose value is `value` then `valueSuffix` (so `Bearer <token>` needs
        /// no joined `String`), marked sensitive as the caller says.
        mutating func append(name: StaticString, value: String, valueSuffix: String = "", sensitive: Bool) {
            let valueCount = value.utf8.count + valueSuffix.utf8.count
            HTTP2HeaderBlock.copy(
                value,
                valueSuffix,
                to: field(name: name, valueCount: valueCount, sensitive: sensitive)
            )
        }

        /// Writes one field that is not sensitive, whose `valueCount` bytes of value
        /// `writeValue` writes in place (a value that is not a `String`).
        mutating func append(name: StaticString, valueCount: Int, writeValue: (UnsafeMutableRawPointer) -> Void) {
            writeValue(field(name: name, valueCount: valueCount, sensitive: false))
        }

        /// Writes every field of `block`, in order.
        mutating func append(contentsOf block: HTTP2HeaderBlock) {
            let byteCount = block.count
            guard byteCount > 0 else { return }
            let destination = take(byteCount)
            block.storage.withUnsafeBytes { source in
                destination.copyMemory(from: source.baseAddress! + HTTP2HeaderBlock.headerBytes, byteCount: byteCount)
            }
        }
    }

    /// Appends the fields `write` writes, which take exactly `room`: the buffer grows (if it
    /// must) and is counted once for all of them.
    mutating func append(_ room: Room, _ write: (inout Writer) -> Void) {
        guard room.bytes > 0 else { return }
        let start = extend(by: room.bytes, fields: room.fields)
        storage.withUnsafeMutableBytes { raw in
            var writer = Writer(raw.baseAddress! + start, byteCount: room.bytes)
            write(&writer)
            precondition(writer.isFull, "header fields written in less than the room counted for them")
        }
    }

    /// Appends every field of `other`, in order.
    package mutating func append(contentsOf other: HTTP2HeaderBlock) {
        let byteCount = other.count
        guard byteCount > 0 else { return }
        let start = extend(by: byteCount, fields: other.fieldCount)
        other.storage.withUnsafeBytes { source in
            storage.withUnsafeMutableBytes { raw in
                (raw.baseAddress! + start).copyMemory(
                    from: source.baseAddress! + Self.headerBytes,
                    byteCount: byteCount
                )
            }
        }
    }

    /// The bytes the block's buffer has room for.
    var capacity: Int { storage.count }

    /// Empties the block, keeping its buffer for the next fields.
    mutating func removeAll(keepingCapacity: Bool) {
        guard keepingCapacity, !storage.isEmpty else {
            storage = []
            return
        }
        storage.withUnsafeMutableBytes { $0.storeBytes(of: 0, as: UInt64.self) }
    }

    /// Makes room for a field with names and values of these lengths, writes its lengths, and
    /// returns where the field starts; the caller writes the sensitivity byte, name and value.
    private mutating func makeRoom(nameCount: Int, valueCount: Int) -> Int {
        let field = extend(by: Self.fieldOverhead + nameCount + valueCount, fields: 1)
        storage.withUnsafeMutableBytes { raw in
            Self.writeLengths(at: raw.baseAddress! + field, nameCount: nameCount, valueCount: valueCount)
        }
        return field
    }

    /// Writes a field's name and value lengths after its sensitivity byte at `field`: four bytes
    /// each, little-endian, as `Fields` reads them.
    private static func writeLengths(at field: UnsafeMutableRawPointer, nameCount: Int, valueCount: Int) {
        field.storeBytes(of: UInt32(truncatingIfNeeded: nameCount).littleEndian, toByteOffset: 1, as: UInt32.self)
        field.storeBytes(of: UInt32(truncatingIfNeeded: valueCount).littleEndian, toByteOffset: 5, as: UInt32.self)
    }

    /// Counts `byteCount` more bytes in `fields` more fields as the block's, growing the buffer
    /// when they do not fit, and returns where the bytes start.
    private mutating func extend(by byteCount: Int, fields: Int) -> Int {
        let count = count
        let fieldCount = fieldCount
        let end = Self.headerBytes + count + byteCount
        // A header list is bounded by the server's limit long before this; the counts are 32-bit.
        precondition(end <= UInt32.max, "a header block of over 4 GiB")
        if end > storage.count { grow(to: end) }
        storage.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: UInt32(count + byteCount), as: UInt32.self)
            raw.storeBytes(of: UInt32(fieldCount + fields), toByteOffset: 4, as: UInt32.self)
        }
        return Self.headerBytes + count
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

    /// Copies a field's value, `value` then `suffix`, to `destination`.
    private static func copy(_ value: String, _ suffix: String, to destination: UnsafeMutableRawPointer) {
        copy(suffix, to: destination + copy(value, to: destination))
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
        let count = count
        return storage.withUnsafeBufferPointer { buffer in
            guard count > 0 else { return body(Fields(buffer: UnsafeBufferPointer(start: nil, count: 0))) }
            return body(
                Fields(buffer: UnsafeBufferPointer(rebasing: buffer[Self.headerBytes..<Self.headerBytes + count]))
            )
        }
    }
}
