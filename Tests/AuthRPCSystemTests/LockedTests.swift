import AuthRPCSystem
import Dispatch
import Testing

@Suite("Locked")
struct LockedTests {
    @Test("updates from many threads at once are all kept")
    func contendedUpdates() {
        let counter = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<10_000 { counter.withLock { $0 += 1 } }
        }
        #expect(counter.withLock { $0 } == 80_000)
    }

    @Test("a typed error thrown in the body leaves the lock and the value as the body left them")
    func throwingBody() {
        struct Refused: Error {}
        let value = Locked([1])
        #expect(throws: Refused.self) {
            try value.withLock { (numbers: inout [Int]) throws(Refused) in
                numbers.append(2)
                throw Refused()
            }
        }
        #expect(value.withLock { $0 } == [1, 2])
    }
}
