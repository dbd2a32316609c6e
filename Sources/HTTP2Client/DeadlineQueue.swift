/// Streams ordered by deadline (a binary min-heap), so the I/O loop knows how long it may sleep.
/// Finished streams are dropped lazily when they reach the top.
struct DeadlineQueue {
    private var heap: [(deadline: ContinuousClock.Instant, stream: HTTP2Stream)] = []

    var isEmpty: Bool { heap.isEmpty }
    /// Entries held, finished streams included.
    var count: Int { heap.count }
    /// The streams held, in no particular order.
    var streams: [HTTP2Stream] { heap.map(\.stream) }

    /// The earliest deadline of a stream still running.
    mutating func nextDeadline() -> ContinuousClock.Instant? {
        while let top = heap.first, top.stream.isFinished { _ = popFirst() }
        return heap.first?.deadline
    }

    mutating func insert(_ stream: HTTP2Stream, deadline: ContinuousClock.Instant) {
        heap.append((deadline, stream))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns every running stream whose deadline is at or before `now`.
    mutating func popExpired(now: ContinuousClock.Instant) -> [HTTP2Stream] {
        var expired: [HTTP2Stream] = []
        while let top = heap.first, top.deadline <= now || top.stream.isFinished {
            let entry = popFirst()
            if !entry.stream.isFinished { expired.append(entry.stream) }
        }
        return expired
    }

    mutating func removeAll() {
        heap.removeAll()
    }

    private mutating func popFirst() -> (deadline: ContinuousClock.Instant, stream: HTTP2Stream) {
        let first = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var smallest = parent
                if left < heap.count && heap[left].deadline < heap[smallest].deadline { smallest = left }
                if right < heap.count && heap[right].deadline < heap[smallest].deadline { smallest = right }
                if smallest == parent { break }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return first
    }
}
