import AuthRPCSystem
import Synchronization

/// One large response body kept for the next, for callers that run on the I/O thread.
///
/// A caller on `Channel.executor` decodes its response on this thread, so the message it builds
/// (swift-protobuf's `Data` for a `bytes` field) comes from the same malloc arena as the body.
/// When both are freed, glibc finds twice the message size free at the arena's top, past its trim
/// threshold (twice the largest block it has handed back), and returns it to the kernel: the
/// next response faults every page in again. One `madvise` a call from 64 KiB responses up; with
/// 1 MiB and 4 MiB ones, 4–6 times the CPU a call of the default executor (Benchmarks/RESULTS.md,
/// "Large responses on `Channel.executor`"). On the default executor the caller's arena is
/// another thread's and nothing is trimmed.
///
/// So the body stays: the caller hands its storage back here (a second reference, taken on this
/// thread only), and the next response that declares a size it fits grows into it instead of a
/// new block. glibc's `free` trims only after freeing a block of 64 KiB or more, so smaller
/// bodies are not kept. The spare is one body per connection, let go when the loop sleeps with
/// no stream open and when the connection ends.
extension ConnectionLoop {
    /// The smallest body worth keeping: glibc's free trims the arena only after freeing a block
    /// of at least this size (its `FASTBIN_CONSOLIDATION_THRESHOLD`).
    static let spareBodyMinimum = 64 << 10

    /// Keeps `body`'s storage as the spare when the caller runs on this loop's thread; does
    /// nothing on any other thread, whose arena keeps its memory anyway and whose references
    /// this thread must not count on.
    @inline(never)
    func keepSpareBody(_ body: [UInt8]) {
        guard ioThread.load(ordering: .relaxed) == CurrentThread.identity else { return }
        spareBody = body
    }
}
