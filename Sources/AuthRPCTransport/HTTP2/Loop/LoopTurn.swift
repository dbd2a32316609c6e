#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Who may touch a connection's loop state (the nghttp2 session, the TLS session, the stream
/// table, the output queues): the I/O thread, which holds the turn from its start to its end
/// except while it sleeps in poll(2), or a caller that takes it with ``tryAcquire()`` in that
/// sleep to write its request itself (`ConnectionLoop.submitHere`).
///
/// Only the I/O thread ever waits for it, and only for the microseconds a caller's submit and
/// non-blocking `send` take; a caller never waits (it queues a command instead), so no thread
/// blocks on the turn while holding another loop's. A `pthread_mutex_t`, not
/// `Synchronization.Mutex`, for the reason `Locked` gives (ThreadSanitizer sees it), and used
/// directly because the I/O thread releases and retakes it around poll(2), not around a closure.
final class LoopTurn: @unchecked Sendable {
    // @unchecked Sendable: the mutex is the state, reached only through pthreads' own calls.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Takes the turn, waiting for a caller that holds it (the I/O thread only).
    func acquire() {
        pthread_mutex_lock(mutex)
    }

    /// Takes the turn if no one holds it; never waits.
    func tryAcquire() -> Bool {
        pthread_mutex_trylock(mutex) == 0
    }

    /// Gives the turn back.
    func release() {
        pthread_mutex_unlock(mutex)
    }
}
