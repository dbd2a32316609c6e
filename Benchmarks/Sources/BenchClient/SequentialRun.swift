import Foundation

/// Many calls one after another on one channel, sampling resident memory, live heap (when the
/// counter is preloaded) and open descriptors every `sampleEvery` calls: the long-run leak check.
enum SequentialRun {
    static func run(_ caller: any UnaryCaller, calls: Int, sampleEvery: Int, warmup: Int) async throws -> [String: Any] {
        for _ in 0..<warmup { try await caller.call() }
        var samples: [[String: Any]] = []
        samples.reserveCapacity(calls / max(1, sampleEvery) + 1)
        let clock = ContinuousClock()
        let start = clock.now
        let cpuBefore = LoadRun.cpuTime()
        func sample(_ done: Int) {
            var row: [String: Any] = [
                "calls": done, "seconds": (clock.now - start).seconds,
                "rss_bytes": ProcessMemory.residentBytes(), "fds": ProcessMemory.openDescriptors(),
            ]
            if let counts = MallocCounts.now() { row["heap_live_bytes"] = counts.liveBytes }
            samples.append(row)
        }
        sample(0)
        for done in 1...calls {
            try await caller.call()
            if done % sampleEvery == 0 { sample(done) }
        }
        let cpuAfter = LoadRun.cpuTime()
        let seconds = (clock.now - start).seconds
        return [
            "calls": calls, "seconds": seconds, "calls_per_second": Double(calls) / seconds,
            "cpu_us_per_call": (cpuAfter.user - cpuBefore.user + cpuAfter.system - cpuBefore.system) * 1e6 / Double(calls),
            "samples": samples,
        ]
    }
}
