/// Response bodies a connection let grow to the size their message prefix declares before that
/// many bytes arrived, and the allowance that bounds them.
///
/// Grown a quarter at a time (``HTTP2Stream/bodyGrowthAhead``), a 4 MiB body is copied into
/// buffers of 64 KiB, 256 KiB, 1 MiB and 4 MiB on its way in: 1.3 MiB copied, and each new buffer's
/// pages faulted in, on top of the bytes themselves. Grown to its declared size at once, it is
/// copied never. But a declared size is only the server's word: a server that declares 4 MiB and
/// sends five bytes on many streams would make the client reserve 4 MiB for each. So a
/// connection grants that growth to at most ``entryLimit`` open streams and ``allowance`` bytes
/// together; past that a body grows a quarter at a time, as before. A stream's grant ends when
/// nghttp2 closes it (stream ids are never reused on a connection) and all of them when the
/// connection ends.
struct BodyReservations {
    /// The most bytes the open streams may hold reserved ahead of what arrived: four 4 MiB
    /// messages, gRPC's default receive limit.
    static let allowance = 16 << 20
    /// The most streams holding a grant at once, so releasing one is a short scan.
    static let entryLimit = 8
    /// The smallest declared size worth a grant: a smaller body's growth copies little.
    static let minimum = 64 << 10

    private var entries: [(streamID: Int32, bytes: Int)] = []
    /// The bytes granted to the open streams.
    private(set) var reservedBytes = 0
    private let allowance: Int

    /// A connection's reservations, with `allowance` bytes to grant (``allowance`` by default;
    /// 0 grants nothing, for tests of the quarter-at-a-time growth).
    init(allowance: Int = Self.allowance) {
        self.allowance = allowance
    }

    /// No stream holds a grant.
    var isEmpty: Bool { entries.isEmpty }

    /// Whether stream `streamID` may grow its body to `bytes` now: yes when it already holds that
    /// much, or when the allowance and the entry limit have room for it (it then holds it).
    mutating func reserve(_ bytes: Int, for streamID: Int32) -> Bool {
        guard bytes >= Self.minimum else { return false }
        if let index = entries.firstIndex(where: { $0.streamID == streamID }) {
            let extra = bytes - entries[index].bytes
            guard extra > 0 else { return true }
            guard reservedBytes + extra <= allowance else { return false }
            entries[index].bytes = bytes
            reservedBytes += extra
            return true
        }
        guard entries.count < Self.entryLimit, reservedBytes + bytes <= allowance else { return false }
        if entries.capacity == 0 { entries.reserveCapacity(Self.entryLimit) }
        entries.append((streamID, bytes))
        reservedBytes += bytes
        return true
    }

    /// Stream `streamID` closed: its grant, if any, goes back to the allowance.
    mutating func release(_ streamID: Int32) {
        guard let index = entries.firstIndex(where: { $0.streamID == streamID }) else { return }
        reservedBytes -= entries[index].bytes
        entries.remove(at: index)
    }
}
