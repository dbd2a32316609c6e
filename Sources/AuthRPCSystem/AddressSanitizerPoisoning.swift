/// Marks memory a pool keeps for reuse as unaddressable under AddressSanitizer, so a read or
/// write through a stale pointer into it is reported as if the block had been freed.
///
/// ASan sees only `malloc` and `free`: a block a pool keeps instead of freeing stays addressable,
/// and a use after its release would go unseen. Outside an ASan build its entry points are not
/// in the process: each call is a check of a cached `nil`.
package enum AddressSanitizerPoisoning {
    private typealias Region = @convention(c) (UnsafeRawPointer?, Int) -> Void
    private typealias Probe = @convention(c) (UnsafeRawPointer?) -> Int32

    private static let poisonRegion = SanitizerRuntime.symbol(
        named: "__asan_poison_memory_region",
        as: Region.self
    )
    private static let unpoisonRegion = SanitizerRuntime.symbol(
        named: "__asan_unpoison_memory_region",
        as: Region.self
    )
    private static let probe = SanitizerRuntime.symbol(named: "__asan_address_is_poisoned", as: Probe.self)

    /// The process runs under AddressSanitizer and its entry points were found.
    package static var isActive: Bool { poisonRegion != nil && unpoisonRegion != nil && probe != nil }

    /// From now on, reaching `byteCount` bytes at `start` is reported (ASan may leave out a
    /// partial 8-byte granule at either end).
    package static func poison(_ start: UnsafeRawPointer, byteCount: Int) {
        poisonRegion?(start, byteCount)
    }

    /// `byteCount` bytes at `start` may be used again.
    package static func unpoison(_ start: UnsafeRawPointer, byteCount: Int) {
        unpoisonRegion?(start, byteCount)
    }

    /// Whether reaching the byte at `address` would be reported (always false outside ASan).
    package static func isPoisoned(_ address: UnsafeRawPointer) -> Bool {
        (probe?(address) ?? 0) != 0
    }
}
