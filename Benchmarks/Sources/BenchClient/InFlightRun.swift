import Foundation
import Synchronization

/// Memory per call in flight: `calls` calls parked by the server at once (the C++ bench server
/// holds a call carrying `x-bench-hold` until told to release), against a baseline of the same
/// number of tasks waiting on a bare continuation. Both shapes set up and warm up the same
/// channel first, so the difference is the library's own state per call.
enum InFlightRun {
    static func run(_ caller: any UnaryCaller, calls: Int, warmup: Int, baseline: Bool) async throws -> [String: Any] {
        for _ in 0..<warmup { try await caller.call() }
        let lot = ParkingLot(capacity: baseline ? calls : 0)
        // The baseline's tasks reach their continuation through the same protocol call, so the
        // harness's task and its call through `UnaryCaller` count on both sides (the held call's
        // own frame differs: a call to the library holds its request and its result's room).
        let holder: any UnaryCaller = baseline ? ParkedCaller(lot: lot) : caller
        // Room for both live-block copies, made before either snapshot.
        var blocksBefore = [Int64](repeating: 0, count: MallocCounts.blockBuckets)
        var blocksHeld = blocksBefore
        let counted = MallocCounts.copyLiveBlocks(into: &blocksBefore)
        let before = Snapshot()
        var held = before
        var released = 0
        try await withThrowingDiscardingTaskGroup { group in
            for _ in 0..<calls {
                group.addTask { try await holder.heldCall() }
            }
            let deadline = ContinuousClock.now + .seconds(120)
            while try await (baseline ? lot.count : caller.control("held")) < calls {
                guard ContinuousClock.now < deadline else {
                    throw BenchFailure(description: "\(calls) calls were not all in flight after 120 s")
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            try await Task.sleep(for: .milliseconds(200))  // let the last replies and wake-ups settle
            held = Snapshot()
            _ = MallocCounts.copyLiveBlocks(into: &blocksHeld)
            released = baseline ? lot.releaseAll() : try await caller.control("release")
        }
        guard released == calls else {
            throw BenchFailure(description: "released \(released) calls, expected \(calls)")
        }
        let n = Double(calls)
        var result: [String: Any] = [
            "calls": calls,
            "rss_before_bytes": before.resident, "rss_held_bytes": held.resident,
            "rss_growth_per_call_bytes": Double(held.resident - before.resident) / n,
            "fds_held": held.descriptors,
        ]
        if let start = before.mallocs, let end = held.mallocs {
            result["heap_growth_per_call_bytes"] = Double(end.liveBytes - start.liveBytes) / n
            result["mallocs_per_call_held"] = Double(end.allocations - start.allocations) / n
        }
        if counted {
            result["held_blocks_per_call"] = heldBlocks(from: blocksBefore, to: blocksHeld, calls: n)
        }
        return result
    }

    /// How many more live blocks of each size there were per call while the calls were held,
    /// keyed by the first byte count of their bucket; buckets that moved by under 0.05 a call
    /// are left out (the runtime's and the harness's stray blocks).
    private static func heldBlocks(from before: [Int64], to held: [Int64], calls: Double) -> [String: Double] {
        var growth: [String: Double] = [:]
        for (index, (start, end)) in zip(before, held).enumerated() {
            let perCall = Double(end - start) / calls
            if abs(perCall) >= 0.05 { growth[String(index * MallocCounts.blockStep)] = perCall }
        }
        return growth
    }

    /// The process's memory at one moment.
    private struct Snapshot {
        var resident = ProcessMemory.residentBytes()
        var descriptors = ProcessMemory.openDescriptors()
        var mallocs = MallocCounts.now()
    }
}

/// The baseline's held call: a bare continuation in the parking lot, nothing else.
private struct ParkedCaller: UnaryCaller {
    let lot: ParkingLot

    nonisolated(nonsending) func call() async throws {}
    func heldCall() async throws { await withUnsafeContinuation { lot.park($0) } }
    func control(_ command: String) async throws -> Int { lot.count }
    func shutdown() async {}
}

/// Where the baseline's tasks wait: a bare continuation each, resumed all at once.
private final class ParkingLot: Sendable {
    private let parked: Mutex<[UnsafeContinuation<Void, Never>]>

    init(capacity: Int) {
        var parked: [UnsafeContinuation<Void, Never>] = []
        parked.reserveCapacity(capacity)
        self.parked = Mutex(parked)
    }

    var count: Int { parked.withLock { $0.count } }

    func park(_ continuation: UnsafeContinuation<Void, Never>) {
        parked.withLock { $0.append(continuation) }
    }

    func releaseAll() -> Int {
        let waiting = parked.withLock { parked in
            defer { parked.removeAll() }
            return parked
        }
        for continuation in waiting { continuation.resume() }
        return waiting.count
    }
}
