import AuthRPCSystem
import Dispatch
import Foundation
import Testing

@Suite("ThreadBufferCache")
struct ThreadBufferCacheTests {
    /// Runs `body` on a new thread, which starts with no buffers kept and ends when `body`
    /// returns (the cache is per thread: the test runner's threads run other tests too).
    private static func onNewThread<Result: Sendable>(_ body: @escaping @Sendable () -> Result) -> Result {
        let done = DispatchSemaphore(value: 0)
        let result = Locked<Result?>(nil)
        let thread = Thread {
            let value = body()
            result.withLock { $0 = value }
            done.signal()
        }
        thread.start()
        done.wait()
        return result.withLock { $0 }!
    }

    /// Where an array's elements start.
    private static func address(_ bytes: [UInt8]) -> UInt {
        bytes.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
    }

    /// Keeps a new buffer of `count` bytes, which nothing else holds once this returns; where
    /// its storage is.
    private static func keepNew(_ count: Int) -> UInt {
        let bytes = [UInt8](repeating: 7, count: count)
        ThreadBufferCache.keep(bytes)
        return address(bytes)
    }

    @Test("a thread that kept nothing takes buffers without storage")
    func nothingKept() {
        let (taken, largest, kept) = Self.onNewThread {
            (ThreadBufferCache.take(minimumCapacity: 10), ThreadBufferCache.takeLargest(), ThreadBufferCache.keptCount)
        }
        #expect(taken.capacity == 0 && largest.capacity == 0 && kept == 0)
    }

    @Test(
        "a take gets the smallest kept buffer that fits, emptied, in its own storage; the largest goes to takeLargest"
    )
    func smallestThatFits() {
        let outcome = Self.onNewThread { () -> [String] in
            let smallAddress = Self.keepNew(100)
            let largeAddress = Self.keepNew(2_000)
            let middleAddress = Self.keepNew(500)
            var problems: [String] = []
            let fits = ThreadBufferCache.take(minimumCapacity: 300)
            if Self.address(fits) != middleAddress || !fits.isEmpty { problems.append("take(300) was not the 500") }
            let largest = ThreadBufferCache.takeLargest()
            if Self.address(largest) != largeAddress || !largest.isEmpty {
                problems.append("largest was not the 2,000")
            }
            let tooLarge = ThreadBufferCache.take(minimumCapacity: 1_000)
            if tooLarge.capacity != 0 { problems.append("take(1,000) found a buffer that cannot fit") }
            let last = ThreadBufferCache.take(minimumCapacity: 1)
            if Self.address(last) != smallAddress { problems.append("take(1) was not the 100") }
            if ThreadBufferCache.keptCount != 0 { problems.append("\(ThreadBufferCache.keptCount) left") }
            return problems
        }
        #expect(outcome.isEmpty, "\(outcome)")
    }

    @Test("a thread keeps at most four buffers, none larger than 8 KiB and none without storage")
    func bounded() {
        let counts = Self.onNewThread { () -> [Int] in
            ThreadBufferCache.keep([])
            ThreadBufferCache.keep([UInt8](repeating: 1, count: ThreadBufferCache.largestCapacityKept + 1))
            let afterRefused = ThreadBufferCache.keptCount
            for count in 1...6 { ThreadBufferCache.keep([UInt8](repeating: 1, count: count * 10)) }
            return [afterRefused, ThreadBufferCache.keptCount]
        }
        #expect(counts == [0, ThreadBufferCache.buffersKept])
    }

    @Test("buffers kept on one thread are not another's")
    func perThread() {
        let (kept, other) = Self.onNewThread { () -> (Int, Int) in
            ThreadBufferCache.keep([UInt8](repeating: 1, count: 64))
            return (ThreadBufferCache.keptCount, Self.onNewThread { ThreadBufferCache.keptCount })
        }
        #expect(kept == 1 && other == 0)
    }

    @Test(
        "a buffer kept while another copy of it lives is copied on the taker's first write, not changed under the copy"
    )
    func copyOnWrite() {
        let (copy, taken) = Self.onNewThread { () -> ([UInt8], [UInt8]) in
            let held = [UInt8](repeating: 9, count: 64)
            ThreadBufferCache.keep(held)
            var taken = ThreadBufferCache.take(minimumCapacity: 10)
            taken.append(contentsOf: [1, 2, 3])
            return (held, taken)
        }
        #expect(copy == [UInt8](repeating: 9, count: 64))
        #expect(taken == [1, 2, 3])
    }
}
