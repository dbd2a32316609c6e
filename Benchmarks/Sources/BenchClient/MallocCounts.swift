#if canImport(Glibc)
import Glibc
#endif

/// The counters of libMallocCounter.so (Benchmarks/Sources/MallocCounter), when the driver
/// preloaded it; BenchClient does not link it, so a plain run pays nothing for counting.
struct MallocCounts {
    var allocations: UInt64
    var reallocations: UInt64
    var frees: UInt64
    var bytes: UInt64
    /// Bytes in live blocks (allocator-sized), counted since the process started.
    var liveBytes: Int64

    private typealias Snapshot = @convention(c) (UnsafeMutablePointer<UInt64>) -> Void

    /// `malloc_counter_snapshot`, found by name in the preloaded library.
    private static let snapshot: Snapshot? = {
        guard let symbol = dlsym(nil, "malloc_counter_snapshot") else { return nil }
        return unsafeBitCast(symbol, to: Snapshot.self)
    }()

    /// Whether the counter is preloaded.
    static var isAvailable: Bool { snapshot != nil }

    /// The counters now, or `nil` without the counter. Allocates nothing.
    static func now() -> MallocCounts? {
        guard let snapshot else { return nil }
        // struct malloc_counts: four uint64_t and one int64_t.
        return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 5) { buffer in
            snapshot(buffer.baseAddress!)
            return MallocCounts(
                allocations: buffer[0],
                reallocations: buffer[1],
                frees: buffer[2],
                bytes: buffer[3],
                liveBytes: Int64(bitPattern: buffer[4])
            )
        }
    }

    private typealias LiveBlocks = @convention(c) (UnsafeMutablePointer<Int64>, UInt64) -> UInt64

    /// `malloc_counter_live_blocks`, found by name in the preloaded library.
    private static let liveBlocks: LiveBlocks? = {
        guard let symbol = dlsym(nil, "malloc_counter_live_blocks") else { return nil }
        return unsafeBitCast(symbol, to: LiveBlocks.self)
    }()

    /// Live blocks by allocator size (MallocCounter.h's buckets), copied into `buckets` (made
    /// with ``blockBuckets`` elements beforehand, so that reading allocates nothing); false
    /// without the counter.
    static func copyLiveBlocks(into buckets: inout [Int64]) -> Bool {
        guard let liveBlocks else { return false }
        _ = buckets.withUnsafeMutableBufferPointer { liveBlocks($0.baseAddress!, UInt64($0.count)) }
        return true
    }

    /// The bytes each live-block bucket starts at (MALLOC_COUNTER_BLOCK_STEP), and how many
    /// buckets there are.
    static let blockStep = 16
    static let blockBuckets = 4096

    /// Per-call figures between two snapshots, as JSON fields.
    static func perCall(from before: MallocCounts?, to after: MallocCounts?, calls: Int) -> [String: Any] {
        guard let before, let after, calls > 0 else { return [:] }
        let n = Double(calls)
        return [
            "mallocs_per_call": Double(after.allocations - before.allocations) / n,
            "reallocs_per_call": Double(after.reallocations - before.reallocations) / n,
            "frees_per_call": Double(after.frees - before.frees) / n,
            "malloc_bytes_per_call": Double(after.bytes - before.bytes) / n,
        ]
    }
}
