/// The submitted unary streams, which the loop owns for as long as nghttp2 may call back about
/// them (see `ConnectionLoop.streams`).
///
/// An array in no order in which each stream knows its slot, as in ``DeadlineQueue``: a stream
/// is added by an append and taken out by a swap with the last one, with no hashing of its id
/// (two hash-table operations on every call). A stream is found by its id through nghttp2's own
/// per-stream user data, which points at it (`SessionCallbacks.unaryStream`).
struct UnaryStreamTable {
    private var entries: [HTTP2Stream] = []

    /// Streams held.
    var count: Int { entries.count }
    /// The streams held, in no particular order.
    var streams: [HTTP2Stream] { entries }

    mutating func insert(_ stream: HTTP2Stream) {
        precondition(stream.tableSlot < 0, "a stream is in the table once")
        stream.tableSlot = entries.count
        entries.append(stream)
    }

    /// Whether `stream` is held.
    func contains(_ stream: HTTP2Stream) -> Bool {
        let slot = stream.tableSlot
        return slot >= 0 && slot < entries.count && entries[slot] === stream
    }

    /// Takes `stream` out; returns whether it was held.
    @discardableResult
    mutating func remove(_ stream: HTTP2Stream) -> Bool {
        guard contains(stream) else { return false }
        let slot = stream.tableSlot
        stream.tableSlot = -1
        let last = entries.removeLast()
        if slot < entries.count {
            entries[slot] = last
            last.tableSlot = slot
        }
        return true
    }

    mutating func removeAll() {
        for stream in entries { stream.tableSlot = -1 }
        entries.removeAll()
    }
}
