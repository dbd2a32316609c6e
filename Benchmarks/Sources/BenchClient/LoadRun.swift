import Foundation
import Synchronization

/// Runs a fixed number of calls with a fixed number in flight, timing each one.
struct LoadRun {
    var calls: Int
    var seconds: Double
    var latencies: [Double]  // microseconds, sorted
    /// What this process used during the timed calls.
    var usage: ResourceUsage
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
        let usageBefore = ResourceUsage.now()
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
        let usage = ResourceUsage.now() - usageBefore
        let mallocsAfter = MallocCounts.now()
        return LoadRun(
            calls: calls,
            seconds: elapsed.seconds,
            latencies: slots.sorted(),
            usage: usage,
            mallocsBefore: mallocsBefore,
            mallocsAfter: mallocsAfter
        )
    }

    func percentile(_ p: Double) -> Double {
        latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
    }

    func json(implementation: String, transport: String, concurrency: Int) -> [String: Any] {
        var object: [String: Any] = [
            "impl": implementation, "transport": transport, "concurrency": concurrency, "calls": calls,
            "seconds": seconds, "calls_per_second": Double(calls) / seconds,
            "p50_us": percentile(0.5), "p99_us": percentile(0.99),
            "cpu_us_per_call": usage.cpuSeconds * 1e6 / Double(calls),
            "context_switches_per_call": Double(usage.contextSwitches) / Double(calls),
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
