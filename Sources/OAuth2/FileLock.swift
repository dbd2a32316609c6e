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
enum FileLock {
    /// How long to wait between two attempts to take a held lock.
    static let retryInterval = Duration.milliseconds(20)

    /// Runs `body` while holding the lock on the file at `path` (created 0600 if missing).
    ///
    /// - Throws: ``OAuthError/Kind/transient`` when another holder keeps the lock past `timeout`
    ///   or the task is cancelled while waiting, ``OAuthError/Kind/storage`` when the lock file
    ///   cannot be opened or locked, or what `body` throws.
    static func withLock<Result: Sendable>(
        at path: String,
        timeout: Duration,
        _ body: @Sendable () async throws(OAuthError) -> Result
    ) async throws(OAuthError) -> Result {
        // O_NOFOLLOW: a symlink planted at the lock's path must not make us create or lock another file.
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw OAuthError(.storage, "could not open the lock file \(path): \(systemErrorDescription(errno))")
        }
        defer { close(descriptor) }

        let deadline = ContinuousClock.now.advanced(by: timeout)
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            guard code == EWOULDBLOCK || code == EINTR else {
                throw OAuthError(.storage, "could not lock \(path): \(systemErrorDescription(code))")
            }
            guard ContinuousClock.now < deadline else {
                throw OAuthError(.transient, "another process holds the lock on \(path); gave up after \(timeout)")
            }
            do {
                try await Task.sleep(for: retryInterval)
            } catch {
                throw OAuthError(.transient, "cancelled while waiting for the lock on \(path)", underlying: CancellationError())
            }
        }
        return try await body()
    }
}

/// The C library's text for an `errno` value.
func systemErrorDescription(_ code: Int32) -> String {
    String(cString: strerror(code))
}
