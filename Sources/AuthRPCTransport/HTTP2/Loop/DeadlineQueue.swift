import AuthRPCSystem

/// Running streams ordered by deadline (a binary min-heap), so the I/O loop knows how long it may
/// sleep. Each stream knows its slot in the heap, so a stream that finishes early leaves at once
/// (O(log n)) instead of staying, with everything it holds, until its deadline comes round.
///
/// Deadlines and streams sit in two parallel arrays: sifting compares only the deadlines, plain
/// integers on the loop's clock (``LoopClock``), so walking the heap calls nothing and copies no
/// stream reference.
struct DeadlineQueue {
    private var deadlines: [ContinuousTime] = []
    private var entries: [HTTP2Stream] = []

    var isEmpty: Bool { entries.isEmpty }
    /// Entries held.
    var count: Int { entries.count }
    /// The streams held, in no particular order.
    var streams: [HTTP2Stream] { entries }

    /// The earliest deadline.
    var nextDeadline: ContinuousTime? { deadlines.first }

    mutating func insert(_ stream: HTTP2Stream, deadline: ContinuousTime) {
        precondition(stream.deadlineSlot < 0, "a stream is queued once")
        deadlines.append(deadline)
        entries.append(stream)
        stream.deadlineSlot = entries.count - 1
        siftUp(entries.count - 1)
    }

    /// Takes `stream` out, if it is queued.
    mutating func remove(_ stream: HTTP2Stream) {
        let slot = stream.deadlineSlot
        guard slot >= 0 else { return }
        stream.deadlineSlot = -1
        let lastDeadline = deadlines.removeLast()
        let last = entries.removeLast()
        guard slot < entries.count else { return }
        deadlines[slot] = lastDeadline
        entries[slot] = last
        last.deadlineSlot = slot
        if slot > 0 && lastDeadline < deadlines[(slot - 1) / 2] {
            siftUp(slot)
        } else {
            siftDown(slot)
        }
    }

    /// Removes and returns the earliest stream whose deadline is at or before `now`, if any.
    mutating func popExpired(now: ContinuousTime) -> HTTP2Stream? {
        guard let first = deadlines.first, first <= now else { return nil }
        let top = entries[0]
        remove(top)
        return top
    }

    mutating func removeAll() {
        for stream in entries { stream.deadlineSlot = -1 }
        deadlines.removeAll()
        entries.removeAll()
    }

    private mutating func siftUp(_ start: Int) {
        deadlines.withUnsafeMutableBufferPointer { deadlines in
            entries.withUnsafeMutableBufferPointer { entries in
                var child = start
                while child > 0 {
                    let parent = (child - 1) / 2
                    guard deadlines[child] < deadlines[parent] else { break }
                    Self.swapSlots(child, parent, deadlines, entries)
                    child = parent
                }
            }
        }
    }

    private mutating func siftDown(_ start: Int) {
        deadlines.withUnsafeMutableBufferPointer { deadlines in
            entries.withUnsafeMutableBufferPointer { entries in
                let count = deadlines.count
                var parent = start
                while true {
                    let left = 2 * parent + 1
                    let right = left + 1
                    var smallest = parent
                    if left < count && deadlines[left] < deadlines[smallest] { smallest = left }
                    if right < count && deadlines[right] < deadlines[smallest] { smallest = right }
                    if smallest == parent { return }
                    Self.swapSlots(parent, smallest, deadlines, entries)
                    parent = smallest
                }
            }
        }
    }

    /// Sifts over the arrays' buffers, where a swap moves the two references (an array's own
    /// `swapAt` and subscript copy them, a retain and a release each).
    private static func swapSlots(
        _ a: Int,
        _ b: Int,
        _ deadlines: UnsafeMutableBufferPointer<ContinuousTime>,
        _ entries: UnsafeMutableBufferPointer<HTTP2Stream>
    ) {
        deadlines.swapAt(a, b)
        entries.swapAt(a, b)
        entries[a].deadlineSlot = a
        entries[b].deadlineSlot = b
    }
}
