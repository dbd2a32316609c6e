import Foundation

/// Many calls one after another on one channel, sampling resident memory, live heap (when the
/// counter is preloaded) and open descriptors every `sampleEvery` calls: the long-run leak check.
enum SequentialRun {
    /// One sample; plain values in storage reserved up front, so sampling itself never grows
    /// the heap it measures.
    private struct Sample {
        var calls: Int
        var seconds: Double
        var resident: Int
        var descriptors: Int
        var liveHeap: Int64?
    }

    static func run(_ caller: any UnaryCaller, calls: Int, sampleEvery: Int, warmup: Int) async throws -> [String: Any]
    {
        for _ in 0..<warmup { try await caller.call() }
        var samples: [Sample] = []
        samples.reserveCapacity(calls / max(1, sampleEvery) + 1)
        let clock = ContinuousClock()
        let start = clock.now
        let usageBefore = ResourceUsage.now()
        func sample(_ done: Int) {
            samples.append(
                Sample(
                    calls: done,
                    seconds: (clock.now - start).seconds,
                    resident: ProcessMemory.residentBytes(),
                    descriptors: ProcessMemory.openDescriptors(),
                    liveHeap: MallocCounts.now()?.liveBytes
                )
            )
        }
        sample(0)
        for done in 1...calls {
            try await caller.call()
            if done % sampleEvery == 0 { sample(done) }
        }
        let usage = ResourceUsage.now() - usageBefore
        let seconds = (clock.now - start).seconds
        return [
            "calls": calls, "seconds": seconds, "calls_per_second": Double(calls) / seconds,
            "cpu_us_per_call": usage.cpuSeconds * 1e6 / Double(calls),
            "context_switches_per_call": Double(usage.contextSwitches) / Double(calls),
            "samples": samples.map { sample -> [String: Any] in
                var row: [String: Any] = [
                    "calls": sample.calls, "seconds": sample.seconds, "rss_bytes": sample.resident,
                    "fds": sample.descriptors,
                ]
                if let heap = sample.liveHeap { row["heap_live_bytes"] = heap }
                return row
            },
        ]
    }
}
