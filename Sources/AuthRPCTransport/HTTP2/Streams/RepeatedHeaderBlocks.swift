/// The final header block and the trailers the connection's server sent last, which the next
/// response's blocks are compared with as they arrive.
///
/// A server answers most calls on a connection with the same fields: gRPC's `content-type` and
/// `grpc-accept-encoding`, then `grpc-status: 0`. While a block's fields repeat the last block of
/// its kind, in order, none of them is made into a string or stored; a block that repeats it whole
/// shares its array, so a typical response allocates neither array. The first field that differs
/// copies the repeated ones out and the block goes on as it would without this; a block that
/// differed is the one the next response is compared with.
///
/// Owned by the connection's loop and used only on its I/O thread. It holds two blocks, each
/// within the connection's header list limit, for as long as the connection lasts (the server's
/// HPACK table, which nghttp2 keeps for the connection, may hold the same fields).
struct RepeatedHeaderBlocks {
    /// Which of a response's blocks a field belongs to.
    enum Kind {
        case headers
        case trailers
    }

    private var headers: [HTTP2HeaderField] = []
    private var trailers: [HTTP2HeaderField] = []

    /// Room made when a block's first field is stored, so a typical gRPC block (content-type,
    /// grpc-accept-encoding; grpc-status, grpc-message) fills one buffer without growing.
    private static let expectedFieldCount = 4

    /// Adds a received field to `fields`, the block of `kind` being received.
    ///
    /// `repeated` follows the block: how many of its fields so far repeat the last block's (not
    /// in `fields`), or -1 once one differed (the block's fields are then all in `fields`). It
    /// starts at 0 for each block.
    ///
    /// Mutating although it changes nothing: the loop owns this value, and a mutating access
    /// borrows the arrays in place where a read would copy them out (a retain and a release on
    /// every received field).
    mutating func append(
        name: UnsafeBufferPointer<UInt8>,
        value: UnsafeBufferPointer<UInt8>,
        to fields: inout [HTTP2HeaderField],
        repeated: inout Int,
        kind: Kind
    ) {
        switch kind {
        case .headers: Self.append(name, value, to: &fields, repeated: &repeated, last: headers)
        case .trailers: Self.append(name, value, to: &fields, repeated: &repeated, last: trailers)
        }
    }

    /// The block of `kind` ended: `fields` gets the fields it repeated, as the last block's own
    /// array when it repeated that whole; a block that differed becomes the last one. `repeated`
    /// is ready for the next block.
    mutating func end(_ fields: inout [HTTP2HeaderField], repeated: inout Int, kind: Kind) {
        switch kind {
        case .headers: Self.end(&fields, repeated: repeated, last: &headers)
        case .trailers: Self.end(&fields, repeated: repeated, last: &trailers)
        }
        repeated = 0
    }

    private static func append(
        _ name: UnsafeBufferPointer<UInt8>,
        _ value: UnsafeBufferPointer<UInt8>,
        to fields: inout [HTTP2HeaderField],
        repeated: inout Int,
        last: [HTTP2HeaderField]
    ) {
        if repeated >= 0 {
            if repeated < last.count, name.equals(utf8Of: last[repeated].name),
                value.equals(utf8Of: last[repeated].value)
            {
                repeated += 1
                return
            }
            copy(repeated, of: last, to: &fields)
            repeated = -1
        }
        if fields.isEmpty { fields.reserveCapacity(expectedFieldCount) }
        fields.append(HTTP2HeaderField(name: ReceivedHeaderText.string(name), value: ReceivedHeaderText.string(value)))
    }

    private static func end(_ fields: inout [HTTP2HeaderField], repeated: Int, last: inout [HTTP2HeaderField]) {
        if repeated < 0 {
            last = fields
        } else if repeated == last.count, fields.isEmpty {
            fields = last
        } else {
            copy(repeated, of: last, to: &fields)
        }
    }

    /// Copies the first `count` fields of `last`, the ones a block repeated, to its `fields`.
    private static func copy(_ count: Int, of last: [HTTP2HeaderField], to fields: inout [HTTP2HeaderField]) {
        guard count > 0 else { return }
        fields.reserveCapacity(fields.count + max(count + 1, expectedFieldCount))
        fields.append(contentsOf: last[..<count])
    }
}
