import AuthRPC
import AuthSampleService

/// What soak workers counted: iterations run, failed ones, and the latencies of the others.
struct SoakResults: Sendable {
    var iterationsRun = 0
    var failures = 0
    var latenciesMilliseconds: [Int] = []

    mutating func merge(_ other: SoakResults) {
        iterationsRun += other.iterationsRun
        failures += other.failures
        latenciesMilliseconds += other.latenciesMilliseconds
    }

    /// min, p50, p90, p99 and max of the successful iterations' latencies.
    var latencySummary: String {
        let sorted = latenciesMilliseconds.sorted()
        guard let first = sorted.first, let last = sorted.last else { return "none succeeded" }
        func percentile(_ p: Int) -> Int { sorted[min(sorted.count - 1, (sorted.count * p + 99) / 100 - 1)] }
        return "min \(first), p50 \(percentile(50)), p90 \(percentile(90)), p99 \(percentile(99)), max \(last)"
    }
}
