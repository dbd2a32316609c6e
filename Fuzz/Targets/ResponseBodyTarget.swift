@testable import AuthRPCTransport

/// A unary response body as DATA arrives for it: `HTTP2Stream.appendBody` (a chunk copied in),
/// `roomInPlace`, `receiveInPlace` and `withdrawPlaced` (a read straight into the body, part of
/// it taken back), on twelve streams that share one connection's `BodyReservations`, and
/// streams closing. The `h2-client` target's inputs (16 KiB at most) never hold a frame large
/// enough to be read in place; this drives that path and the body's growth without I/O.
///
/// Input: a byte for the call's response limit (0: none, else that many times 16 KiB), then
/// operations of four bytes `op a b c`. `op & 0xf` picks a stream (modulo 12), `op >> 4 & 3`
/// the operation:
/// - 0, a message starts: a prefix declaring `(a << 8 | b) << 4` bytes (0…1 MiB), then
///   `64 × c` of them;
/// - 1, a chunk of `(a << 8 | b) & 0x7fff` bytes;
/// - 2, a read in place for a frame with `(a << 8 | b) << 2` payload bytes to come (0…256 KiB):
///   `c & 0x7f` 127ths of the room are written, and with `c & 0x80` half of those are taken back;
/// - 3, the stream closes, and a new one takes its place.
///
/// The body is always exactly the bytes given to it, in order; the room in place is at least
/// the minimum, within the frame, the declared size, the limit and the free capacity, or none;
/// and what the bodies hold beyond four times the most each ever received (plus the
/// allocator's rounding) is within what the connection granted, which is within its allowance.
enum ResponseBodyTarget {
    private static let streamCount = 12
    private static let allowance = 1 << 20
    private static let minimum = ConnectionLoop.inPlaceMinimum
    /// What malloc may add to a requested capacity (a large block is a whole number of pages).
    private static let rounding = 4096 + 64
    /// The bytes every chunk is cut from: a pattern that is not periodic in a power of two.
    private static let pattern = (0..<(1 << 18)).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ $0 >> 8) }

    private struct Slot {
        var stream: HTTP2Stream
        var expected: [UInt8] = []
        var peak = 0
        /// Where in ``pattern`` the slot's next bytes start.
        var cursor = 0

        init(id: Int32, limit: Int) {
            stream = HTTP2Stream(
                request: HTTP2Request(headerBlock: HTTP2HeaderBlock(), body: [], maxResponseBodyBytes: limit)
            )
            stream.id = id
        }

        mutating func nextBytes(_ count: Int) -> ArraySlice<UInt8> {
            let start = cursor % (pattern.count / 2)
            cursor += count
            return pattern[start..<start + min(count, pattern.count / 2)]
        }
    }

    static func run(_ bytes: [UInt8]) throws(OracleViolation) {
        guard let first = bytes.first else { return }
        let limit = first == 0 ? Int.max : Int(first) << 14
        var reservations = BodyReservations(allowance: allowance)
        var spare: [UInt8] = []
        var nextID: Int32 = 1
        var slots: [Slot] = (0..<streamCount).map { _ in
            defer { nextID += 2 }
            return Slot(id: nextID, limit: limit)
        }
        var offset = 1
        while offset + 4 <= bytes.count {
            let (op, a, b, c) = (bytes[offset], Int(bytes[offset + 1]), Int(bytes[offset + 2]), Int(bytes[offset + 3]))
            offset += 4
            let index = Int(op & 0xf) % streamCount
            switch op >> 4 & 3 {
            case 0:
                let declared = (a << 8 | b) << 4
                var chunk: [UInt8] = [0, UInt8(declared >> 24 & 0xff), UInt8(declared >> 16 & 0xff)]
                chunk += [UInt8(declared >> 8 & 0xff), UInt8(declared & 0xff)]
                chunk += slots[index].nextBytes(64 * c)
                append(chunk[...], to: &slots[index], spare: &spare, reservations: &reservations)
            case 1:
                let chunk = slots[index].nextBytes((a << 8 | b) & 0x7fff)
                append(chunk, to: &slots[index], spare: &spare, reservations: &reservations)
            case 2:
                try readInPlace(into: &slots[index], frameLeft: (a << 8 | b) << 2, c: c, reservations: &reservations)
            default:
                reservations.release(slots[index].stream.id)
                slots[index] = Slot(id: nextID, limit: limit)
                nextID += 2
            }
            try require(
                slots[index].stream.body.count == slots[index].expected.count,
                "stream \(slots[index].stream.id): \(slots[index].stream.body.count) bytes in the body, "
                    + "\(slots[index].expected.count) given to it"
            )
            try checkBounds(slots, reservations)
        }
        for slot in slots {
            try require(slot.stream.body == slot.expected, "stream \(slot.stream.id): the body is not the bytes given")
        }
    }

    private static func append(
        _ chunk: ArraySlice<UInt8>,
        to slot: inout Slot,
        spare: inout [UInt8],
        reservations: inout BodyReservations
    ) {
        guard !chunk.isEmpty else { return }
        chunk.withUnsafeBytes { slot.stream.appendBody($0, spare: &spare, reservations: &reservations) }
        slot.expected += chunk
        slot.peak = max(slot.peak, slot.expected.count)
    }

    private static func readInPlace(
        into slot: inout Slot,
        frameLeft: Int,
        c: Int,
        reservations: inout BodyReservations
    ) throws(OracleViolation) {
        let before = slot.stream.body.count
        let room = slot.stream.roomInPlace(frameLeft: frameLeft, minimum: minimum, reservations: &reservations)
        guard room > 0 else { return }
        let body = slot.stream.body
        let declared = GRPCMessagePrefix.byteCount + GRPCMessagePrefix.payloadLength(body)
        try require(
            room >= minimum && room <= frameLeft && room <= declared - before && room <= body.capacity - before,
            "stream \(slot.stream.id): room \(room) for a frame with \(frameLeft) to come, \(before) of "
                + "\(declared) declared bytes received, capacity \(body.capacity)"
        )
        try require(declared <= slot.stream.request.maxResponseBodyBytes, "room in place past the call's limit")
        guard #available(macOS 26, *) else { return }
        let written = room * (c & 0x7f) / 127
        let bytes = slot.nextBytes(written)
        slot.stream.receiveInPlace(count: room) { target in
            bytes.withUnsafeBytes { target.copyMemory(from: $0) }
            return bytes.count
        }
        slot.expected += bytes
        slot.peak = max(slot.peak, slot.expected.count)
        if c & 0x80 != 0 {
            let withdrawn = bytes.count / 2
            slot.stream.withdrawPlaced(withdrawn)
            slot.expected.removeLast(withdrawn)
        }
    }

    /// What the bodies hold beyond four times the most they received is what the connection
    /// granted, within its allowance; a body past that bound is within its call's limit.
    private static func checkBounds(_ slots: [Slot], _ reservations: BodyReservations) throws(OracleViolation) {
        try require(
            reservations.reservedBytes <= allowance,
            "\(reservations.reservedBytes) bytes granted, over the allowance of \(allowance)"
        )
        var ahead = 0
        for slot in slots {
            let capacity = slot.stream.body.capacity
            let excess = capacity - HTTP2Stream.bodyGrowthAhead * slot.peak - rounding
            guard excess > 0 else { continue }
            ahead += excess
            try require(
                capacity - rounding <= slot.stream.request.maxResponseBodyBytes,
                "stream \(slot.stream.id): capacity \(capacity) past the call's limit"
            )
        }
        try require(
            ahead <= reservations.reservedBytes,
            "bodies hold \(ahead) bytes beyond four times what they received; \(reservations.reservedBytes) granted"
        )
    }
}
