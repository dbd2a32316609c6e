/// Running streams ordered by deadline (a binary min-heap), so the I/O loop knows how long it may
/// sleep. Each stream knows its slot in the heap, so a stream that finishes early leaves at once
/// (O(log n)) instead of staying, with everything it holds, until its deadline comes round.
struct DeadlineQueue {
    private var heap: [(deadline: ContinuousClock.Instant, stream: HTTP2Stream)] = []

    var isEmpty: Bool { heap.isEmpty }
    /// Entries held.
    var count: Int { heap.count }
    /// The streams held, in no particular order.
    var streams: [HTTP2Stream] { heap.map(\.stream) }

    /// The earliest deadline.
    var nextDeadline: ContinuousClock.Instant? { heap.first?.deadline }

    mutating func insert(_ stream: HTTP2Stream, deadline: ContinuousClock.Instant) {
        precondition(stream.deadlineSlot < 0, "a stream is queued once")
        heap.append((deadline, stream))
        stream.deadlineSlot = heap.count - 1
        siftUp(heap.count - 1)
    }

    /// Takes `stream` out, if it is queued.
    mutating func remove(_ stream: HTTP2Stream) {
        let slot = stream.deadlineSlot
        guard slot >= 0 else { return }
        stream.deadlineSlot = -1
        let last = heap.removeLast()
        guard slot < heap.count else { return }
        heap[slot] = last
        last.stream.deadlineSlot = slot
        if slot > 0 && last.deadline < heap[(slot - 1) / 2].deadline {
            siftUp(slot)
        } else {
            siftDown(slot)
        }
    }

    /// Removes and returns the earliest stream whose deadline is at or before `now`, if any.
    mutating func popExpired(now: ContinuousClock.Instant) -> HTTP2Stream? {
        guard let top = heap.first, top.deadline <= now else { return nil }
        remove(top.stream)
        return top.stream
    }

    mutating func removeAll() {
        for entry in heap { entry.stream.deadlineSlot = -1 }
        heap.removeAll()
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { break }
            swapSlots(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count && heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count && heap[right].deadline < heap[smallest].deadline { smallest = right }
            if smallest == parent { return }
            swapSlots(parent, smallest)
            parent = smallest
        }
    }

    private mutating func swapSlots(_ a: Int, _ b: Int) {
        heap.swapAt(a, b)
        heap[a].stream.deadlineSlot = a
        heap[b].stream.deadlineSlot = b
    }
}
