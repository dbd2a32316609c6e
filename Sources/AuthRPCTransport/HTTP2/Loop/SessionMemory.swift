import AuthRPCSystem
internal import CNGHTTP2

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The memory one nghttp2 session allocates: its small blocks come from per-size free lists the
/// session keeps, so a call's stream record and outbound items (four mallocs per call otherwise)
/// reuse the blocks earlier calls gave back.
///
/// Only the connection's I/O thread calls it: nghttp2 allocates and frees only inside the calls
/// the loop makes, and the loop is the only caller of the session (``ConnectionLoop``). So no
/// lock. The cache is bounded: at most ``retainedBytesPerClass`` of free blocks per size class,
/// 192 KiB in all, reached only after a burst of that many calls at once (the connection's own
/// buffers are 448 KiB); a block past that goes back to `free` at once, and every cached block
/// goes back when this value ends, which its owner lets happen only after `nghttp2_session_del`.
///
/// Under AddressSanitizer a cached block (all but its first word, the free list's link), and the
/// part of a handed-out block past the size asked for, are poisoned (``PoisonedBlocks``):
/// nghttp2 reaching them is reported as a use after free or an overflow, as it would be without
/// the cache.
struct SessionMemory: ~Copyable {
    /// One size class's free blocks, linked through their first word.
    struct FreeList {
        var head: UnsafeMutableRawPointer?
        var count: Int
    }

    /// Bytes in front of each block nghttp2 gets: its size class (or `-1`: allocated for its
    /// size alone), then the size asked for. Sixteen, so the block keeps `malloc`'s alignment.
    static let headerBytes = 16
    /// Block sizes (header included): 64, 128, ..., 2,048 bytes. nghttp2's per-call blocks are
    /// 150 to 750 bytes; larger ones (its tables and buffers) come once per session.
    static let classCount = 6
    static let smallestBlock = 64
    /// Room for the blocks a turn of the loop frees at 100 calls in flight: with 16 KiB, 0.7
    /// mallocs per call more came back at 100 in flight (h2c, `make bench-quick`'s counter).
    static let retainedBytesPerClass = 32 << 10

    /// The free lists, which nghttp2 carries as its `mem_user_data`.
    let lists: UnsafeMutablePointer<FreeList>

    init() {
        lists = .allocate(capacity: Self.classCount)
        lists.initialize(repeating: FreeList(head: nil, count: 0), count: Self.classCount)
    }

    /// What `nghttp2_session_client_new3` takes; nghttp2 copies it into the session. Its entry
    /// points mark blocks for AddressSanitizer only in a process that runs under it: decided
    /// here, once per session, not on each of a call's dozen allocations and frees.
    var allocator: nghttp2_mem {
        var functions = Self.marking == ObjectIdentifier(PoisonedBlocks.self) ? Self.poisoning : Self.plain
        functions.mem_user_data = UnsafeMutableRawPointer(lists)
        return functions
    }

    /// How this process's sessions mark their blocks: poisoned under AddressSanitizer, not at all
    /// otherwise (a `BlockMarking` type's identity).
    static var marking: ObjectIdentifier {
        ObjectIdentifier(AddressSanitizerPoisoning.isActive ? PoisonedBlocks.self : UnmarkedBlocks.self)
    }

    private static var plain: nghttp2_mem {
        nghttp2_mem(
            mem_user_data: nil,
            malloc: { size, lists in
                SessionMemory.allocate(size, lists!.assumingMemoryBound(to: FreeList.self), UnmarkedBlocks.self)
            },
            free: { block, lists in
                SessionMemory.free(block, lists!.assumingMemoryBound(to: FreeList.self), UnmarkedBlocks.self)
            },
            calloc: { count, size, lists in
                SessionMemory.allocateZeroed(
                    count,
                    size,
                    lists!.assumingMemoryBound(to: FreeList.self),
                    UnmarkedBlocks.self
                )
            },
            realloc: { block, size, lists in
                SessionMemory.reallocate(
                    block,
                    size,
                    lists!.assumingMemoryBound(to: FreeList.self),
                    UnmarkedBlocks.self
                )
            }
        )
    }

    private static var poisoning: nghttp2_mem {
        nghttp2_mem(
            mem_user_data: nil,
            malloc: { size, lists in
                SessionMemory.allocate(size, lists!.assumingMemoryBound(to: FreeList.self), PoisonedBlocks.self)
            },
            free: { block, lists in
                SessionMemory.free(block, lists!.assumingMemoryBound(to: FreeList.self), PoisonedBlocks.self)
            },
            calloc: { count, size, lists in
                SessionMemory.allocateZeroed(
                    count,
                    size,
                    lists!.assumingMemoryBound(to: FreeList.self),
                    PoisonedBlocks.self
                )
            },
            realloc: { block, size, lists in
                SessionMemory.reallocate(
                    block,
                    size,
                    lists!.assumingMemoryBound(to: FreeList.self),
                    PoisonedBlocks.self
                )
            }
        )
    }

    deinit {
        for index in 0..<Self.classCount {
            var block = lists[index].head
            while let current = block {
                block = current.load(fromByteOffset: Self.headerBytes, as: UnsafeMutableRawPointer?.self)
                systemFree(current)
            }
        }
        lists.deinitialize(count: Self.classCount)
        lists.deallocate()
    }

    // MARK: - The four entry points

    /// The size class whose blocks hold `size` bytes after the header, or nil when none does.
    static func sizeClass(for size: Int) -> Int? {
        let needed = size + headerBytes
        guard needed > smallestBlock else { return 0 }
        // ceil(log2(needed)) - log2(smallestBlock)
        let index = (Int.bitWidth - (needed - 1).leadingZeroBitCount) - smallestBlock.trailingZeroBitCount
        return index < classCount ? index : nil
    }

    /// The most cached blocks of class `index`. Asked on every free, so a shift of a constant,
    /// not a division by the block size (a class's blocks are twice the size of the one before).
    @inline(__always)
    static func retainedLimit(ofClass index: Int) -> Int {
        (retainedBytesPerClass / smallestBlock) >> index
    }

    static func allocate<Marking: BlockMarking>(
        _ size: Int,
        _ lists: UnsafeMutablePointer<FreeList>,
        _ marking: Marking.Type
    ) -> UnsafeMutableRawPointer? {
        guard size <= Int.max - headerBytes else { return nil }
        guard let index = sizeClass(for: size) else {
            guard let block = malloc(size + headerBytes) else { return nil }
            block.storeBytes(of: -1, as: Int.self)
            block.storeBytes(of: size, toByteOffset: 8, as: Int.self)
            return block + headerBytes
        }
        let capacity = (smallestBlock << index) - headerBytes
        if let block = lists[index].head {
            Marking.unpoison(block + headerBytes, byteCount: size)
            lists[index].head = block.load(fromByteOffset: headerBytes, as: UnsafeMutableRawPointer?.self)
            lists[index].count -= 1
            block.storeBytes(of: size, toByteOffset: 8, as: Int.self)
            return block + headerBytes
        }
        guard let block = malloc(smallestBlock << index) else { return nil }
        block.storeBytes(of: index, as: Int.self)
        block.storeBytes(of: size, toByteOffset: 8, as: Int.self)
        Marking.poison(block + headerBytes + size, byteCount: capacity - size)
        return block + headerBytes
    }

    static func free<Marking: BlockMarking>(
        _ pointer: UnsafeMutableRawPointer?,
        _ lists: UnsafeMutablePointer<FreeList>,
        _ marking: Marking.Type
    ) {
        guard let pointer else { return }
        let block = pointer - headerBytes
        let index = block.load(as: Int.self)
        guard index >= 0, lists[index].count < retainedLimit(ofClass: index) else {
            systemFree(block)
            return
        }
        // The link stays addressable and the rest of the block goes off limits: LeakSanitizer
        // ignores pointers kept in poisoned memory, so a poisoned link would make every cached
        // block but the first look leaked.
        let link = MemoryLayout<UnsafeMutableRawPointer?>.size
        Marking.unpoison(pointer, byteCount: link)
        pointer.storeBytes(of: lists[index].head, as: UnsafeMutableRawPointer?.self)
        Marking.poison(pointer + link, byteCount: (smallestBlock << index) - headerBytes - link)
        lists[index].head = block
        lists[index].count += 1
    }

    static func allocateZeroed<Marking: BlockMarking>(
        _ count: Int,
        _ size: Int,
        _ lists: UnsafeMutablePointer<FreeList>,
        _ marking: Marking.Type
    ) -> UnsafeMutableRawPointer? {
        let (total, overflow) = count.multipliedReportingOverflow(by: size)
        guard !overflow, let pointer = allocate(total, lists, marking) else { return nil }
        memset(pointer, 0, total)
        return pointer
    }

    /// As `realloc`: the block itself when it already holds `size` bytes; otherwise a new one
    /// with the old contents, and the old one freed (kept, with nil returned, when none can be had).
    static func reallocate<Marking: BlockMarking>(
        _ pointer: UnsafeMutableRawPointer?,
        _ size: Int,
        _ lists: UnsafeMutablePointer<FreeList>,
        _ marking: Marking.Type
    ) -> UnsafeMutableRawPointer? {
        guard let pointer else { return allocate(size, lists, marking) }
        let block = pointer - headerBytes
        let index = block.load(as: Int.self)
        let used = block.load(fromByteOffset: 8, as: Int.self)
        let capacity = index >= 0 ? (smallestBlock << index) - headerBytes : used
        if size <= capacity {
            if index >= 0 {
                block.storeBytes(of: size, toByteOffset: 8, as: Int.self)
                Marking.unpoison(pointer, byteCount: size)
                Marking.poison(pointer + size, byteCount: capacity - size)
            }
            return pointer
        }
        guard let moved = allocate(size, lists, marking) else { return nil }
        moved.copyMemory(from: pointer, byteCount: used)
        free(pointer, lists, marking)
        return moved
    }
}

/// The C library's `free`, by a name `SessionMemory.free` does not shadow.
private func systemFree(_ block: UnsafeMutableRawPointer) {
    free(block)
}
