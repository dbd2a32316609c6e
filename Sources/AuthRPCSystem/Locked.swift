// Public, though no product exports this module: the compiler inlines and specializes an
// `@inlinable` function in other modules only when it is public (a `package` one stays a call of
// its generic version, with type metadata and an indirect result, on every lock). `withLock`
// inlines, so the pthread calls it makes are part of this module's interface.
#if canImport(Glibc)
public import Glibc
#elseif canImport(Darwin)
public import Darwin
#endif

/// A value guarded by a `pthread_mutex_t`: the lock every type of this package shares state with.
///
/// Why not `Synchronization.Mutex`: on Linux its lock and unlock live in the prebuilt,
/// uninstrumented runtime, so ThreadSanitizer cannot see them and reports every access it guards
/// as a race (a two-line program shows it). A `pthread_mutex_t` is intercepted by every sanitizer,
/// so `make test-sanitize` reports real races only. Uncontended, both cost an atomic exchange, and
/// the value and its mutex share one allocation.
///
/// ```swift
/// let counter = Locked(0)
/// counter.withLock { $0 += 1 }
/// ```
public struct Locked<Value> {
    @usableFromInline let storage: LockedStorage<Value>

    /// Guards `value`.
    public init(_ value: Value) {
        storage = LockedStorage.make(value)
    }

    /// Runs `body` with exclusive access to the value. Never call back into the same lock from
    /// `body`, and never wait in it for another thread.
    @inlinable
    public func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        try storage.withLock(body)
    }
}

// @unchecked Sendable: the value is only reached through `withLock`, under the mutex.
extension Locked: @unchecked Sendable where Value: Sendable {}

/// The value (as the buffer's header) with its mutex tail-allocated behind it, so the mutex has
/// the stable address pthreads require.
@usableFromInline
final class LockedStorage<Value>: ManagedBuffer<Value, pthread_mutex_t> {
    static func make(_ value: Value) -> LockedStorage {
        let buffer = create(minimumCapacity: 1) { _ in value }
        let storage = unsafeDowncast(buffer, to: LockedStorage.self)
        storage.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            let status = pthread_mutex_init(mutex, nil)
            precondition(status == 0, "pthread_mutex_init failed: \(status)")
        }
        return storage
    }

    deinit {
        withUnsafeMutablePointerToElements { mutex in
            pthread_mutex_destroy(mutex)
            mutex.deinitialize(count: 1)
        }
    }

    @inlinable
    func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        try withUnsafeMutablePointers { value, mutex throws(E) -> Result in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    }
}
