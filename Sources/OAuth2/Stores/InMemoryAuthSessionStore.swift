import AuthRPCSystem

/// A store that keeps the session in memory, for tests and for apps that persist it elsewhere.
///
/// ``withExclusiveAccess(timeout:_:)`` serializes bodies within this process, first come first
/// served; it is not reentrant (a body that asks for the lock again waits until its timeout).
public final class InMemoryAuthSessionStore: SharedAuthSessionStore {
    private struct State {
        var stored: AuthState?
        var isLocked = false
        var nextWaiterID: UInt64 = 0
        /// Waiting tasks in arrival order; each is resumed with `true` when the lock is handed to
        /// it, or `false` when it gave up (timeout or cancellation).
        var waiters: [(id: UInt64, continuation: CheckedContinuation<Bool, Never>)] = []
    }

    private let state: Locked<State>

    /// Creates a store holding `state` (nothing by default).
    public init(_ state: AuthState? = nil) {
        self.state = Locked(State(stored: state))
    }

    /// Keeps `state`, replacing what was stored.
    public func save(_ state: AuthState) throws(OAuthError) {
        self.state.withLock { $0.stored = state }
    }

    /// The stored state, or `nil`.
    public func retrieve() throws(OAuthError) -> AuthState? {
        state.withLock { $0.stored }
    }

    /// Forgets the stored state.
    public func remove() throws(OAuthError) {
        state.withLock { $0.stored = nil }
    }

    /// Runs `body` while no other body of this store runs.
    ///
    /// - Throws: ``OAuthError/Kind/transient`` when the lock is not obtained within `timeout` or
    ///   the task is cancelled while waiting; otherwise what `body` throws.
    public func withExclusiveAccess<Result: Sendable>(
        timeout: Duration,
        _ body: @Sendable () async throws(OAuthError) -> Result
    ) async throws(OAuthError) -> Result {
        try await acquire(timeout: timeout)
        defer { release() }
        return try await body()
    }

    private func acquire(timeout: Duration) async throws(OAuthError) {
        let waiterID: UInt64? = state.withLock { state in
            if !state.isLocked {
                state.isLocked = true
                return nil
            }
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        guard let waiterID else { return }

        let deadline = ContinuousClock.now.advanced(by: timeout)
        let timer = Task {
            guard (try? await Task.sleep(until: deadline, clock: .continuous)) != nil else { return }
            abandon(waiterID)
        }
        defer { timer.cancel() }
        let acquired = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let outcome: Bool? = state.withLock { state in
                    // The lock may have been released since the first look.
                    if !state.isLocked {
                        state.isLocked = true
                        return true
                    }
                    // Checked under the lock: a timer or cancellation handler that ran before this
                    // point found no waiter to resume, so this one must not wait.
                    if Task.isCancelled || ContinuousClock.now >= deadline { return false }
                    state.waiters.append((waiterID, continuation))
                    return nil
                }
                if let outcome { continuation.resume(returning: outcome) }
            }
        } onCancel: {
            abandon(waiterID)
        }
        guard acquired else {
            if Task.isCancelled {
                throw OAuthError(
                    .transient,
                    "cancelled while waiting for the in-memory session store's lock",
                    underlying: CancellationError()
                )
            }
            throw OAuthError(.transient, "the in-memory session store's lock was not obtained within \(timeout)")
        }
    }

    /// Hands the lock to the first waiter, or frees it.
    private func release() {
        let next = state.withLock { state in
            if state.waiters.isEmpty {
                state.isLocked = false
                return nil as CheckedContinuation<Bool, Never>?
            }
            return state.waiters.removeFirst().continuation
        }
        next?.resume(returning: true)
    }

    /// Resumes a waiter that gives up; does nothing if it already got the lock.
    private func abandon(_ waiterID: UInt64) {
        let continuation = state.withLock { state in
            state.waiters.firstIndex { $0.id == waiterID }.map { state.waiters.remove(at: $0).continuation }
        }
        continuation?.resume(returning: false)
    }
}
