import AuthRPCSystem
import Testing

@testable import AuthRPCTransport

/// The loop's deadline heap, without a connection: order, early removal and the slots streams keep.
@Suite("Deadline queue")
struct DeadlineQueueTests {
    private func stream() -> HTTP2Stream {
        HTTP2Stream(request: HTTP2Request(headerBlock: HTTP2HeaderBlock(), body: []))
    }

    private func at(_ ticks: Int64) -> ContinuousTime {
        ContinuousTime(nanoseconds: ticks)
    }

    /// Pops everything due at `now`, as the loop does each turn.
    private func popAll(_ queue: inout DeadlineQueue, now: ContinuousTime) -> [HTTP2Stream] {
        var popped: [HTTP2Stream] = []
        while let stream = queue.popExpired(now: now) { popped.append(stream) }
        return popped
    }

    @Test("streams leave in deadline order, only once due, and keep no slot once out")
    func order() {
        var queue = DeadlineQueue()
        let deadlines: [Int64] = [50, 10, 40, 30, 20, 60, 10]
        let streams = deadlines.map { _ in stream() }
        for (stream, deadline) in zip(streams, deadlines) {
            queue.insert(stream, deadline: at(deadline))
        }
        #expect(queue.count == 7)
        #expect(queue.nextDeadline == at(10))
        #expect(queue.popExpired(now: at(9)) == nil)

        let due = popAll(&queue, now: at(30))
        #expect(due.count == 4)
        #expect(
            due.map { ObjectIdentifier($0) }.allSatisfy { id in
                [0, 1, 3, 4, 6].contains { ObjectIdentifier(streams[$0]) == id }
            }
        )
        #expect(due.allSatisfy { $0.deadlineSlot == -1 })
        #expect(queue.nextDeadline == at(40))
        #expect(
            popAll(&queue, now: at(.max)).map { ObjectIdentifier($0) }
                == [2, 0, 5].map { ObjectIdentifier(streams[$0]) }
        )
        #expect(queue.isEmpty)
        #expect(queue.nextDeadline == nil)
    }

    @Test("a stream that ends early leaves at once, from any slot; one not queued changes nothing")
    func earlyRemoval() {
        var queue = DeadlineQueue()
        let streams = (0..<5).map { _ in stream() }
        for (index, stream) in streams.enumerated() {
            queue.insert(stream, deadline: at(Int64(index) * 10))
        }
        queue.remove(streams[0])  // the root
        queue.remove(streams[3])  // a leaf
        queue.remove(streams[3])  // again: already out
        queue.remove(stream())  // never queued
        #expect(queue.count == 3)
        #expect(streams[0].deadlineSlot == -1 && streams[3].deadlineSlot == -1)
        #expect(
            popAll(&queue, now: at(.max)).map { ObjectIdentifier($0) }
                == [1, 2, 4].map { ObjectIdentifier(streams[$0]) }
        )
    }

    @Test("removeAll lets every stream go and clears their slots")
    func removeAll() {
        var queue = DeadlineQueue()
        let streams = (0..<4).map { _ in stream() }
        for stream in streams { queue.insert(stream, deadline: at(7)) }
        queue.removeAll()
        #expect(queue.isEmpty)
        #expect(streams.allSatisfy { $0.deadlineSlot == -1 })
        queue.insert(streams[0], deadline: at(1))
        #expect(queue.popExpired(now: at(1)) === streams[0])
    }

    @Test("against a sorted list, over 2,000 inserts, removals and pops in a fixed pseudo-random order")
    func matchesSortedModel() {
        var queue = DeadlineQueue()
        var model: [(deadline: Int64, stream: HTTP2Stream)] = []
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(bound))
        }
        var now: Int64 = 0
        for _ in 0..<2_000 {
            switch next(4) {
            case 0, 1:
                let entry = (deadline: now + Int64(next(1_000)), stream: stream())
                queue.insert(entry.stream, deadline: at(entry.deadline))
                model.append(entry)
            case 2 where !model.isEmpty:
                let index = next(model.count)
                queue.remove(model[index].stream)
                model.remove(at: index)
            default:
                now += Int64(next(300))
                let due = popAll(&queue, now: at(now))
                let expected = model.filter { $0.deadline <= now }
                model.removeAll { $0.deadline <= now }
                #expect(due.count == expected.count)
                // Streams due at the same instant may leave in either order; deadlines never go back.
                let dueDeadlines = due.map { stream in expected.first { $0.stream === stream }?.deadline ?? -1 }
                #expect(dueDeadlines == expected.map(\.deadline).sorted())
            }
            #expect(queue.count == model.count)
            #expect(queue.nextDeadline == model.map(\.deadline).min().map(at))
        }
    }
}
