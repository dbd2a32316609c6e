import AuthRPCSystem
import Foundation
import Testing

@testable import AuthRPCTransport

/// The allocator nghttp2 sessions use, through the same four entry points nghttp2 calls.
@Suite("Session memory")
struct SessionMemoryTests {
    private typealias Memory = SessionMemory

    private func withLists<T>(_ body: (UnsafeMutablePointer<Memory.FreeList>) throws -> T) rethrows -> T {
        let memory = SessionMemory()
        return try body(memory.lists)
    }

    @Test("sizes map to the smallest class whose blocks hold them with the header; larger ones to none")
    func sizeClasses() {
        #expect(Memory.sizeClass(for: 0) == 0)
        #expect(Memory.sizeClass(for: 48) == 0)
        #expect(Memory.sizeClass(for: 49) == 1)
        #expect(Memory.sizeClass(for: 224) == 2)  // nghttp2_stream
        #expect(Memory.sizeClass(for: 703) == 4)
        #expect(Memory.sizeClass(for: 2_032) == 5)
        #expect(Memory.sizeClass(for: 2_033) == nil)
        #expect(Memory.retainedLimit(ofClass: 0) == 512)
        #expect(Memory.retainedLimit(ofClass: 5) == 16)
    }

    @Test("a freed block is the next one of its class handed out; another class's is not")
    func reuse() {
        withLists { lists in
            let first = Memory.allocate(224, lists, PoisonedBlocks.self)!
            Memory.free(first, lists, PoisonedBlocks.self)
            #expect(lists[2].count == 1)
            let other = Memory.allocate(100, lists, PoisonedBlocks.self)!
            #expect(other != first)
            let again = Memory.allocate(200, lists, PoisonedBlocks.self)!
            #expect(again == first)
            #expect(lists[2].count == 0)
            Memory.free(other, lists, PoisonedBlocks.self)
            Memory.free(again, lists, PoisonedBlocks.self)
        }
    }

    @Test("no more than the class's limit is cached; the rest goes back to the system at once")
    func bounded() {
        withLists { lists in
            let limit = Memory.retainedLimit(ofClass: 2)
            let blocks = (0..<(limit + 10)).map { _ in Memory.allocate(224, lists, PoisonedBlocks.self)! }
            #expect(Set(blocks).count == blocks.count)
            for block in blocks { Memory.free(block, lists, PoisonedBlocks.self) }
            #expect(lists[2].count == limit)
        }
    }

    @Test("blocks too large for a class are the system's own and never cached")
    func large() {
        withLists { lists in
            let block = Memory.allocate(10_000, lists, PoisonedBlocks.self)!
            block.initializeMemory(as: UInt8.self, repeating: 0xAB, count: 10_000)
            Memory.free(block, lists, PoisonedBlocks.self)
            #expect((0..<Memory.classCount).allSatisfy { lists[$0].count == 0 })
        }
    }

    @Test("calloc zeroes a reused block, and refuses a count and size whose product overflows")
    func zeroed() {
        withLists { lists in
            let dirty = Memory.allocate(200, lists, PoisonedBlocks.self)!
            dirty.initializeMemory(as: UInt8.self, repeating: 0xFF, count: 200)
            Memory.free(dirty, lists, PoisonedBlocks.self)
            let clean = Memory.allocateZeroed(25, 8, lists, PoisonedBlocks.self)!
            #expect(clean == dirty)
            #expect(UnsafeRawBufferPointer(start: clean, count: 200).allSatisfy { $0 == 0 })
            Memory.free(clean, lists, PoisonedBlocks.self)
            #expect(Memory.allocateZeroed(Int.max / 2, 3, lists, PoisonedBlocks.self) == nil)
            #expect(Memory.allocate(Int.max, lists, PoisonedBlocks.self) == nil)
        }
    }

    @Test("realloc keeps the block while it fits, and moves the contents when it grows past it")
    func reallocate() {
        withLists { lists in
            let block = Memory.reallocate(nil, 40, lists, PoisonedBlocks.self)!
            for index in 0..<40 { block.storeBytes(of: UInt8(index), toByteOffset: index, as: UInt8.self) }
            #expect(Memory.reallocate(block, 48, lists, PoisonedBlocks.self) == block)
            let grown = Memory.reallocate(block, 1_000, lists, PoisonedBlocks.self)!
            #expect(grown != block)
            #expect((0..<40).allSatisfy { grown.load(fromByteOffset: $0, as: UInt8.self) == UInt8($0) })
            #expect(lists[0].count == 1)
            let huge = Memory.reallocate(grown, 50_000, lists, PoisonedBlocks.self)!
            #expect((0..<40).allSatisfy { huge.load(fromByteOffset: $0, as: UInt8.self) == UInt8($0) })
            #expect(Memory.reallocate(huge, 40_000, lists, PoisonedBlocks.self) == huge)
            Memory.free(huge, lists, PoisonedBlocks.self)
        }
    }
}

/// Under AddressSanitizer the cache hides nothing ASan would have seen without it.
@Suite("Session memory under AddressSanitizer")
struct SessionMemoryPoisoningTests {
    @Test("ASan's entry points are found exactly when the process runs under it")
    func foundUnderAddressSanitizer() {
        // `make test-sanitize` sets ASAN_OPTIONS for the ASan run only.
        let underASan = ProcessInfo.processInfo.environment["ASAN_OPTIONS"] != nil
        #expect(AddressSanitizerPoisoning.isActive == underASan)
    }

    @Test(
        "a cached block past its link word, and a block's bytes past the size asked for, are poisoned; handed out again, they are not"
    )
    func poisoned() {
        let memory = SessionMemory()
        let lists = memory.lists
        let active = AddressSanitizerPoisoning.isActive
        let block = SessionMemory.allocate(100, lists, PoisonedBlocks.self)!
        #expect(!AddressSanitizerPoisoning.isPoisoned(block + 99))
        #expect(AddressSanitizerPoisoning.isPoisoned(block + 100) == active)
        #expect(AddressSanitizerPoisoning.isPoisoned(block + 104) == active)
        SessionMemory.free(block, lists, PoisonedBlocks.self)
        // The first word holds the free list's link, which LeakSanitizer must be able to read.
        #expect(!AddressSanitizerPoisoning.isPoisoned(block))
        #expect(AddressSanitizerPoisoning.isPoisoned(block + 8) == active)
        #expect(AddressSanitizerPoisoning.isPoisoned(block + 64) == active)
        let again = SessionMemory.reallocate(nil, 80, lists, PoisonedBlocks.self)!
        #expect(again == block)
        #expect(!AddressSanitizerPoisoning.isPoisoned(again))
        #expect(!AddressSanitizerPoisoning.isPoisoned(again + 79))
        #expect(AddressSanitizerPoisoning.isPoisoned(again + 80) == active)
        let grown = SessionMemory.reallocate(again, 100, lists, PoisonedBlocks.self)!
        #expect(grown == again)
        #expect(!AddressSanitizerPoisoning.isPoisoned(grown + 99))
        SessionMemory.free(grown, lists, PoisonedBlocks.self)
        // The entry points nghttp2 is given poison under ASan, and only there.
        #expect(SessionMemory.marking == ObjectIdentifier(active ? PoisonedBlocks.self : UnmarkedBlocks.self))
    }
}
