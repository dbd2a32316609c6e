import Foundation
import Synchronization

/// Runs a fixed number of calls with a fixed number in flight, timing each one.
struct LoadRun {
    var calls: Int
    var seconds: Double
    var latencies: [Double]   // microseconds, sorted
    /// User and system CPU seconds this process spent during the timed calls.
    var cpuUser: Double
    var cpuSystem: Double
    /// The allocation counters around the timed calls (when the counter is preloaded).
    var mallocsBefore: MallocCounts?
    var mallocsAfter: MallocCounts?

    /// A warm-up (connects, fills caches), then `calls` calls by `concurrency` workers. The
    /// latency slots are allocated before the counters are read, so the harness adds only its
    /// worker tasks to the allocation figure (the `noop` implementation measures that).
    static func run(_ caller: any UnaryCaller, calls: Int, concurrency: Int, warmup: Int) async throws -> LoadRun {
        for _ in 0..<warmup { try await caller.call() }
        let next = Ticket()
        let slots = LatencySlots(count: calls)
        let clock = ContinuousClock()
        let mallocsBefore = MallocCounts.now()
        let cpuBefore = Self.cpuTime()
        let start = clock.now
        try await withThrowingDiscardingTaskGroup { group in
            for _ in 0..<concurrency {
                group.addTask {
                    while case let ticket = next.take(), ticket < calls {
                        let began = clock.now
                        try await caller.call()
                        slots.record(clock.now - began, at: ticket)
                    }
                }
            }
        }
        let elapsed = clock.now - start
        let cpuAfter = Self.cpuTime()
        let mallocsAfter = MallocCounts.now()
        return LoadRun(calls: calls, seconds: elapsed.seconds, latencies: slots.sorted(),
                       cpuUser: cpuAfter.user - cpuBefore.user, cpuSystem: cpuAfter.system - cpuBefore.system,
                       mallocsBefore: mallocsBefore, mallocsAfter: mallocsAfter)
    }

    static func cpuTime() -> (user: Double, system: Double) {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return (seconds(usage.ru_utime), seconds(usage.ru_stime))
    }

    func percentile(_ p: Double) -> Double {
        latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
    }

    func json(implementation: String, transport: String, concurrency: Int) -> [String: Any] {
        var object: [String: Any] = [
            "impl": implementation, "transport": transport, "concurrency": concurrency, "calls": calls,
            "seconds": seconds, "calls_per_second": Double(calls) / seconds,
            "p50_us": percentile(0.5), "p99_us": percentile(0.99),
            "cpu_us_per_call": (cpuUser + cpuSystem) * 1e6 / Double(calls),
        ]
        object.merge(MallocCounts.perCall(from: mallocsBefore, to: mallocsAfter, calls: calls)) { $1 }
        return object
    }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// Hands out call numbers to the workers.
final class Ticket: Sendable {
    private let next = Atomic<Int>(0)

    func take() -> Int {
        next.wrappingAdd(1, ordering: .relaxed).oldValue
    }
}

/// One latency slot per call, allocated up front so recording allocates nothing.
///
/// `@unchecked Sendable`: slot `i` is written only by the worker that took ticket `i` (each
/// ticket is handed out once), and the slots are read only after every worker has finished.
private final class LatencySlots: @unchecked Sendable {
    private let slots: UnsafeMutableBufferPointer<Double>

    init(count: Int) {
        slots = .allocate(capacity: count)
        slots.initialize(repeating: 0)
    }

    deinit {
        slots.deallocate()
    }

    func record(_ latency: Duration, at index: Int) {
        slots[index] = latency.seconds * 1e6
    }

    func sorted() -> [Double] {
        slots.sorted()
    }
}
