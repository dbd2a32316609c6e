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

    /// A warm-up (connects, fills caches), then `calls` calls by `concurrency` workers.
    static func run(_ caller: any UnaryCaller, calls: Int, concurrency: Int) async throws -> LoadRun {
        for _ in 0..<min(200, calls) { try await caller.call() }
        let next = Ticket()
        let cpuBefore = Self.cpuTime()
        let clock = ContinuousClock()
        let start = clock.now
        let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    var mine: [Double] = []
                    mine.reserveCapacity(calls / concurrency + 1)
                    while next.take() < calls {
                        let began = clock.now
                        try await caller.call()
                        let (seconds, attoseconds) = (clock.now - began).components
                        mine.append(Double(seconds) * 1e6 + Double(attoseconds) / 1e12)
                    }
                    return mine
                }
            }
            return try await group.reduce(into: [Double]()) { $0 += $1 }
        }
        let (seconds, attoseconds) = (clock.now - start).components
        let cpuAfter = Self.cpuTime()
        return LoadRun(calls: calls, seconds: Double(seconds) + Double(attoseconds) / 1e18, latencies: latencies.sorted(),
                       cpuUser: cpuAfter.user - cpuBefore.user, cpuSystem: cpuAfter.system - cpuBefore.system)
    }

    private static func cpuTime() -> (user: Double, system: Double) {
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

    func json(implementation: String, transport: String, concurrency: Int) -> String {
        let object: [String: Any] = [
            "impl": implementation, "transport": transport, "concurrency": concurrency, "calls": calls,
            "seconds": seconds, "calls_per_second": Double(calls) / seconds,
            "p50_us": percentile(0.5), "p99_us": percentile(0.99),
            "cpu_us_per_call": (cpuUser + cpuSystem) * 1e6 / Double(calls),
        ]
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }
}

/// Hands out call numbers to the workers.
private final class Ticket: Sendable {
    private let next = Atomic<Int>(0)

    func take() -> Int {
        next.wrappingAdd(1, ordering: .relaxed).oldValue
    }
}
