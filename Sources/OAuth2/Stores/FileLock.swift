import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive `flock` on a lock file, for processes that share a session file.
///
/// `flock` locks belong to the open file description, so two opens of the same lock file exclude
/// each other even within one process. Closing the descriptor releases the lock, and the kernel
/// closes it when a process dies, so a crashed holder never leaves the lock taken.
///
/// The lock is reentrant for the task holding it through one store (and the child tasks it
/// awaits): a body that saves through that store does not wait for itself. Another store on the
/// same file still waits, as another process would. That is tracked per acquisition in a task
/// local, and ends when the body returns, so a task that outlives the body does not inherit it.
enum FileLock {
    /// How long to wait between two attempts to take a held lock.
    static let retryInterval = Duration.milliseconds(20)

    /// Who takes a lock: one per store (copies of a store value share it).
    final class Owner: Sendable {}

    /// One acquisition of a lock, valid while its body runs.
    final class Hold: Sendable {
        let path: String
        let owner: Owner
        private let isHeld = Atomic<Bool>(true)

        init(path: String, owner: Owner) {
            self.path = path
            self.owner = owner
        }

        var isActive: Bool { isHeld.load(ordering: .acquiring) }
        func end() { isHeld.store(false, ordering: .releasing) }
    }

    /// The locks the current task holds.
    @TaskLocal static var holds: [Hold] = []

    /// Whether the current task already holds the lock on `path` through `owner`.
    static func isHeld(_ path: String, by owner: Owner) -> Bool {
        holds.contains { $0.path == path && $0.owner === owner && $0.isActive }
    }

    /// Runs `body` while holding the lock on the file at `path` (created 0600 if missing).
    ///
    /// - Throws: ``OAuthError/Kind/transient`` when another holder keeps the lock past `timeout`
    ///   or the task is cancelled while waiting, ``OAuthError/Kind/storage`` when the lock file
    ///   cannot be opened or locked, or what `body` throws.
    static func withLock<Result: Sendable>(
        at path: String,
        owner: Owner,
        timeout: Duration,
        _ body: @Sendable () async throws(OAuthError) -> Result
    ) async throws(OAuthError) -> Result {
        if isHeld(path, by: owner) { return try await body() }
        let descriptor = try openLockFile(path)
        defer { close(descriptor) }
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while try !tryLock(descriptor, path: path) {
            guard ContinuousClock.now < deadline else {
                throw OAuthError(.transient, "another process holds the lock on \(path); gave up after \(timeout)")
            }
            do {
                try await Task.sleep(for: retryInterval)
            } catch {
                throw OAuthError(
                    .transient,
                    "cancelled while waiting for the lock on \(path)",
                    underlying: CancellationError()
                )
            }
        }
        let hold = Hold(path: path, owner: owner)
        defer { hold.end() }
        // withValue's throws are untyped: carry the body's typed error through as a value.
        let outcome: Swift.Result<Result, OAuthError> = await $holds.withValue(holds + [hold]) {
            do throws(OAuthError) { return .success(try await body()) } catch { return .failure(error) }
        }
        return try outcome.get()
    }

    /// ``withLock(at:timeout:_:)`` for synchronous callers: waits by sleeping the calling thread.
    static func withLockBlocking<Result>(
        at path: String,
        owner: Owner,
        timeout: Duration,
        _ body: () throws(OAuthError) -> Result
    ) throws(OAuthError) -> Result {
        if isHeld(path, by: owner) { return try body() }
        let descriptor = try openLockFile(path)
        defer { close(descriptor) }
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while try !tryLock(descriptor, path: path) {
            guard ContinuousClock.now < deadline else {
                throw OAuthError(.transient, "another process holds the lock on \(path); gave up after \(timeout)")
            }
            let (seconds, attoseconds) = retryInterval.components
            usleep(UInt32(seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
        }
        let hold = Hold(path: path, owner: owner)
        defer { hold.end() }
        let outcome: Swift.Result<Result, OAuthError> = $holds.withValue(holds + [hold]) {
            do throws(OAuthError) { return .success(try body()) } catch { return .failure(error) }
        }
        return try outcome.get()
    }

    private static func openLockFile(_ path: String) throws(OAuthError) -> Int32 {
        // O_NOFOLLOW: a symlink planted at the lock's path must not make us create or lock another file.
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw OAuthError(.storage, "could not open the lock file \(path): \(systemErrorDescription(errno))")
        }
        return descriptor
    }

    /// One attempt: `true` when the lock is taken, `false` when another holder has it.
    private static func tryLock(_ descriptor: Int32, path: String) throws(OAuthError) -> Bool {
        if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return true }
        let code = errno
        guard code == EWOULDBLOCK || code == EINTR else {
            throw OAuthError(.storage, "could not lock \(path): \(systemErrorDescription(code))")
        }
        return false
    }
}

/// The C library's text for an `errno` value.
func systemErrorDescription(_ code: Int32) -> String {
    String(cString: strerror(code))
}
