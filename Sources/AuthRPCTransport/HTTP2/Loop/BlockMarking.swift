import AuthRPCSystem

/// How `SessionMemory` marks the blocks it caches and hands out for AddressSanitizer. The
/// session's entry points are specialized for one of the two, picked once when the session is
/// made.
protocol BlockMarking {
    /// From now on, reaching `byteCount` bytes at `start` is a reported error.
    static func poison(_ start: UnsafeRawPointer, byteCount: Int)
    /// `byteCount` bytes at `start` may be used again.
    static func unpoison(_ start: UnsafeRawPointer, byteCount: Int)
}

/// A process without AddressSanitizer: nothing to mark, and no call made to find that out.
enum UnmarkedBlocks: BlockMarking {
    @inline(__always) static func poison(_ start: UnsafeRawPointer, byteCount: Int) {}
    @inline(__always) static func unpoison(_ start: UnsafeRawPointer, byteCount: Int) {}
}

/// A process under AddressSanitizer: cached blocks are poisoned, handed-out ones unpoisoned.
enum PoisonedBlocks: BlockMarking {
    static func poison(_ start: UnsafeRawPointer, byteCount: Int) {
        AddressSanitizerPoisoning.poison(start, byteCount: byteCount)
    }

    static func unpoison(_ start: UnsafeRawPointer, byteCount: Int) {
        AddressSanitizerPoisoning.unpoison(start, byteCount: byteCount)
    }
}
