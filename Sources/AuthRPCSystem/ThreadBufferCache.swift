#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// A few empty byte buffers each thread keeps for its next unary call.
///
/// A call needs two buffers: its framed request, and the body its response is gathered into on
/// the connection's thread. Without this cache each is a `malloc` a call, and the response
/// body is allocated on the connection's thread and freed on the caller's, which takes glibc
/// back to the other thread's arena (past the per-thread cache) on both ends. With it, a call
/// takes its request buffer (the smallest kept that fits) and its response buffer (the
/// largest kept) from the calling thread, and gives both back once its answer is accepted (the
/// connection is done with both by then), for the next call the thread runs. Nothing here is
/// shared between threads, so there is no lock: a buffer taken on one thread and given back on
/// another moves with the call.
///
/// Bounded: at most ``buffersKept`` buffers a thread, none larger than
/// ``largestCapacityKept`` bytes (32 KiB a thread at most), freed when the thread exits.
/// Reuse is safe whatever else holds a buffer: should another copy of the array still exist
/// when it is given back (a deserializer that kept a slice of the response), the taker's
/// first write copies it, as any array's does.
package enum ThreadBufferCache {
    /// The most buffers a thread keeps: two calls' worth.
    package static let buffersKept = 4
    /// The largest capacity kept, in bytes; larger buffers go back to the allocator. Larger
    /// response bodies have their own reuse on the connection (`ConnectionLoop+SpareBody`).
    package static let largestCapacityKept = 8 << 10

    /// An empty buffer with room for at least `minimumCapacity` bytes: the smallest the
    /// calling thread keeps that is large enough, or an empty array without storage.
    package static func take(minimumCapacity: Int) -> [UInt8] {
        Shelf.withCurrent { $0?.take(minimumCapacity: minimumCapacity, largest: false) ?? [] }
    }

    /// The largest empty buffer the calling thread keeps, or an empty array without storage.
    package static func takeLargest() -> [UInt8] {
        Shelf.withCurrent { $0?.take(minimumCapacity: 0, largest: true) ?? [] }
    }

    /// Keeps `buffer`'s storage for the calling thread's next take, when the thread keeps
    /// fewer than ``buffersKept`` and the buffer is no larger than ``largestCapacityKept``.
    package static func keep(_ buffer: [UInt8]) {
        guard buffer.capacity > 0, buffer.capacity <= largestCapacityKept else { return }
        Shelf.withCurrent { ($0 ?? Shelf.makeCurrent()).keep(buffer) }
    }

    /// How many buffers the calling thread keeps (for tests).
    package static var keptCount: Int { Shelf.withCurrent { $0?.count ?? 0 } }
}

/// One thread's buffers, reached through a pthread key whose destructor frees them when the
/// thread exits. Only its own thread touches it.
private final class Shelf {
    /// `count` buffers in the first slots, the rest uninitialized: moved in and out without the
    /// retains, uniqueness checks and exclusivity checks an array of arrays costs.
    private let slots: UnsafeMutablePointer<[UInt8]>
    // Unchecked at run time (each access would otherwise be a runtime call): only the shelf's
    // own thread reaches it, and no access runs code that could reach it again.
    @exclusivity(unchecked) private(set) var count = 0

    init() {
        slots = .allocate(capacity: ThreadBufferCache.buffersKept)
    }

    deinit {
        slots.deinitialize(count: count)
        slots.deallocate()
    }

    static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, releaseShelf)
        precondition(status == 0, "pthread_key_create failed: \(status)")
        return key
    }()

    /// Calls `body` with the calling thread's shelf (nil when it has none), borrowed: the key's
    /// reference keeps it alive until the thread exits, and only this thread uses it meanwhile.
    @inline(__always)
    static func withCurrent<Result>(_ body: (Shelf?) -> Result) -> Result {
        guard let pointer = pthread_getspecific(key) else { return body(nil) }
        return Unmanaged<Shelf>.fromOpaque(pointer)._withUnsafeGuaranteedRef { body($0) }
    }

    /// A new shelf for the calling thread, which has none; the key holds its reference.
    static func makeCurrent() -> Shelf {
        let shelf = Shelf()
        let status = pthread_setspecific(key, Unmanaged.passRetained(shelf).toOpaque())
        precondition(status == 0, "pthread_setspecific failed: \(status)")
        return shelf
    }

    /// The smallest buffer of at least `minimumCapacity` bytes (the largest, when `largest`),
    /// emptied; the last slot's buffer moves into its place.
    func take(minimumCapacity: Int, largest: Bool) -> [UInt8] {
        var chosen = -1
        var chosenCapacity = 0
        for index in 0..<count {
            let capacity = slots[index].capacity
            guard capacity >= minimumCapacity else { continue }
            if chosen < 0 || (capacity < chosenCapacity) != largest {
                chosen = index
                chosenCapacity = capacity
            }
        }
        guard chosen >= 0 else { return [] }
        count -= 1
        var buffer = (slots + chosen).move()
        if chosen != count {
            (slots + chosen).initialize(to: (slots + count).move())
        }
        buffer.removeAll(keepingCapacity: true)
        return buffer
    }

    func keep(_ buffer: [UInt8]) {
        guard count < ThreadBufferCache.buffersKept else { return }
        (slots + count).initialize(to: buffer)
        count += 1
    }
}

/// The key's destructor: the exiting thread's shelf, and the buffers on it, are let go.
#if canImport(Glibc)
private let releaseShelf: @convention(c) (UnsafeMutableRawPointer?) -> Void = { pointer in
    guard let pointer else { return }
    Unmanaged<Shelf>.fromOpaque(pointer).release()
}
#else
private let releaseShelf: @convention(c) (UnsafeMutableRawPointer) -> Void = { pointer in
    Unmanaged<Shelf>.fromOpaque(pointer).release()
}
#endif
