import AuthRPCSystem
package import Foundation

/// The token engine every token provider of this package runs on: ``AuthSession`` and each
/// Google credential (GoogleAuth's `GoogleCredentials`). It holds the current access token and
/// hands it out by one set of rules:
///
/// - **The fast path**: ``cachedToken()`` answers from a lock-protected copy, without a task or an
///   actor hop, while the token is fresh (``ExpiryMargin``: 60 s before expiry by default, at most
///   half the lifetime).
/// - **One fetch in flight**: every caller that finds no fresh token while a fetch runs waits for
///   that fetch and gets its answer, so 200 calls on an expired token make one token request.
/// - **Backoff**: after a failed fetch, callers get the same error at once until the wait of
///   ``RefreshBackoff`` has passed; a fetched token ends the backoff.
/// - **Stopping**: an owner whose grant was refused for good (``AuthSession`` after `invalid_grant`)
///   holds ``Holding/stopped(_:)``: every request fails with that error until it holds something
///   else.
/// - **Generations**: ``reset(to:)`` starts a new generation (a new sign-in, a sign-out): a fetch of
///   the old one still in flight is no longer shared, and its owner drops its answer.
///
/// The engine never logs and never shows a token. Its owner fetches (and logs) in the closure it
/// gives ``token(fetch:)``, and tells the engine what it holds (``hold(_:)``, ``accept(_:generation:)``).
/// It reads the time from its ``TokenEngineClock``, so its rules can be tested with a plain closure
/// as the fetch and a clock moved by hand.
package final class TokenEngine: Sendable {
    /// What one fetch came to.
    package enum Outcome: Sendable {
        /// A token. The owner made the engine hold it (when it is fresh) before returning.
        case token(String)
        /// No token; callers get this error.
        case failure(OAuthError)
        /// The owner's state was replaced while the fetch waited: look again at the new one.
        case superseded
    }

    /// Which failed fetches start (or lengthen) the backoff.
    package enum BackoffScope: Sendable {
        /// Only transient ones (the network, 5xx, an unusable answer): for an owner that stops on
        /// refusals by itself.
        case transientFailures
        /// Every failure but a cancellation: a refused grant is asked again only after the wait.
        case everyFailure
    }

    /// What the engine may hand out, as its owner says.
    package enum Holding: Sendable {
        /// This token, fresh until `freshUntil` (`nil`: no known expiry).
        case token(String, freshUntil: Date?)
        /// No fresh token: the next request fetches.
        case nothing
        /// No token until the owner holds something else: every request fails with this error.
        case stopped(OAuthError)
    }

    /// How long before expiry a fetched token stops counting as fresh (at most half its lifetime).
    package let expiryTolerance: Duration
    /// How long to wait after failed fetches before fetching again.
    package let refreshBackoff: RefreshBackoff
    private let backoffScope: BackoffScope
    private let clock: TokenEngineClock

    private struct State {
        var holding: Holding
        var generation: UInt64 = 0
        var inFlight: (generation: UInt64, task: Task<Outcome, Never>)?
        var backoff: RefreshBackoffState?
    }

    private let state: Locked<State>

    /// How many times one request looks again after its fetch was superseded; each time needs the
    /// owner's state to be replaced during the wait, so this is never reached in use.
    private static let maximumSupersededPasses = 8

    /// An engine holding `holding` at first, reading the time from `clock`.
    package init(
        holding: Holding = .nothing,
        expiryTolerance: Duration = .seconds(60),
        refreshBackoff: RefreshBackoff = .default,
        backoffScope: BackoffScope,
        clock: TokenEngineClock = .system
    ) {
        self.expiryTolerance = expiryTolerance
        self.refreshBackoff = refreshBackoff
        self.backoffScope = backoffScope
        self.clock = clock
        state = Locked(State(holding: holding))
    }

    // MARK: - Handing out tokens

    /// The held token when it is fresh right now, or `nil`: no task, no actor, one lock.
    package func cachedToken() -> String? {
        state.withLock { state in
            guard case .token(let token, let freshUntil) = state.holding else { return nil }
            if let freshUntil, clock.date() >= freshUntil { return nil }
            return token
        }
    }

    /// A fresh token: the held one, or the answer of the fetch in flight, or of a new fetch.
    ///
    /// `fetch` runs in a task of its own (a caller's cancellation or deadline does not cut it
    /// short for the others) and gets the generation it runs for.
    ///
    /// - Throws: the stopping error, the backoff's error, or the fetch's.
    package func token(
        fetch: @escaping @Sendable (_ generation: UInt64) async -> Outcome
    ) async throws(OAuthError) -> String {
        for _ in 0..<Self.maximumSupersededPasses {
            let task: Task<Outcome, Never>
            switch nextStep(fetch) {
            case .answer(let token): return token
            case .fail(let error): throw error
            case .wait(let running): task = running
            }
            switch await task.value {
            case .token(let token): return token
            case .failure(let error): throw error
            case .superseded: continue
            }
        }
        throw OAuthError(.transient, "the credentials were replaced again and again while fetching a token; try again")
    }

    /// A fresh token from `source`: what ``token(fetch:)`` does for an owner whose tokens all come
    /// from one ``AccessTokenSource``.
    package func token(from source: any AccessTokenSource) async throws(OAuthError) -> String {
        try await token { generation in
            do throws(OAuthError) {
                let fetched = try await source.fetchToken()
                self.accept(fetched, generation: generation)
                return .token(fetched.accessToken)
            } catch {
                return .failure(error)
            }
        }
    }

    /// What one request for a token comes to, decided at once.
    package enum Step: Sendable {
        /// The held token, fresh.
        case answer(String)
        /// No token: the stopping error, or the backoff's.
        case fail(OAuthError)
        /// The fetch in flight: joined, or started by this request.
        case wait(Task<Outcome, Never>)
    }

    /// The decision behind ``token(fetch:)``, under the lock: the held token, a failure to hand
    /// out, or the fetch to wait for (joined, or started here so no second one can start
    /// meanwhile; `fetch` runs only when it starts one).
    package func nextStep(_ fetch: @escaping @Sendable (_ generation: UInt64) async -> Outcome) -> Step {
        state.withLock { state in
            switch state.holding {
            case .stopped(let error):
                return .fail(error)
            case .token(let token, let freshUntil) where freshUntil.map({ clock.date() < $0 }) ?? true:
                return .answer(token)
            case .token, .nothing:
                break
            }
            if let backoff = state.backoff, clock.instant() < backoff.until {
                return .fail(backoff.error)
            }
            if let inFlight = state.inFlight, inFlight.generation == state.generation {
                return .wait(inFlight.task)
            }
            let generation = state.generation
            let task = Task { await self.run(fetch, generation: generation) }
            state.inFlight = (generation, task)
            return .wait(task)
        }
    }

    /// Runs one fetch for everyone waiting, then clears it and records its outcome for the
    /// backoff, before any waiter resumes.
    private func run(_ fetch: @Sendable (UInt64) async -> Outcome, generation: UInt64) async -> Outcome {
        let outcome = await fetch(generation)
        state.withLock { state in
            if state.inFlight?.generation == generation { state.inFlight = nil }
            guard state.generation == generation else { return }
            switch outcome {
            case .token:
                state.backoff = nil
            case .failure(let error) where backsOff(after: error):
                let failures = (state.backoff?.failures ?? 0) + 1
                var random = SystemRandomNumberGenerator()
                let delay = refreshBackoff.delay(afterFailures: failures, using: &random)
                state.backoff = RefreshBackoffState(failures: failures, until: clock.instant() + delay, error: error)
            case .failure, .superseded:
                break
            }
        }
        return outcome
    }

    private func backsOff(after error: OAuthError) -> Bool {
        guard !(error.underlying is CancellationError) else { return false }
        switch backoffScope {
        case .transientFailures: return error.kind == .transient
        case .everyFailure: return true
        }
    }

    // MARK: - What the owner holds

    /// Holds `holding` from now on (the owner's state changed).
    package func hold(_ holding: Holding) {
        state.withLock { $0.holding = holding }
    }

    /// Holds a fetched token, fresh by ``ExpiryMargin``, unless `generation` is no longer current.
    ///
    /// - Returns: Whether the token is now held.
    @discardableResult
    package func accept(_ fetched: FetchedAccessToken, generation: UInt64) -> Bool {
        let freshUntil = ExpiryMargin.freshUntil(
            issuedAt: fetched.receivedAt,
            expiresAt: fetched.expiresAt,
            tolerance: expiryTolerance
        )
        return state.withLock { state in
            guard state.generation == generation else { return false }
            state.holding = .token(fetched.accessToken, freshUntil: freshUntil)
            return true
        }
    }

    /// Stops handing out `token` (a server rejected it) if it is still the held one; when another
    /// caller already fetched past it, nothing changes.
    package func invalidate(token: String) {
        state.withLock { state in
            if case .token(let held, _) = state.holding, held == token {
                state.holding = .nothing
            }
        }
    }

    /// Starts a new generation holding `holding`: the fetch in flight is no longer shared (its
    /// owner drops its answer, see ``isCurrent(_:)``) and the backoff is forgotten.
    ///
    /// - Returns: The new generation.
    @discardableResult
    package func reset(to holding: Holding) -> UInt64 {
        state.withLock { state in
            state.generation &+= 1
            state.inFlight = nil
            state.backoff = nil
            state.holding = holding
            return state.generation
        }
    }

    /// Whether `generation` is still the current one.
    package func isCurrent(_ generation: UInt64) -> Bool {
        state.withLock { $0.generation == generation }
    }

    /// Forgets the backoff (the owner took in credentials that have not failed).
    package func endBackoff() {
        state.withLock { $0.backoff = nil }
    }
}
