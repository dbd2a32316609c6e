import AuthRPCSystem
package import Foundation

/// The token engine every token provider of this package runs on: ``AuthSession`` and each
/// Google credential (GoogleAuth's `GoogleCredentials`). It holds the current access token and
/// hands it out by one set of rules:
///
/// - **The fast path**: ``cachedToken()`` answers from a lock-protected copy, without a task or an
///   actor hop, while the token has not expired (``ExpiryMargin``: 60 s before the server's expiry
///   by default, at most half the lifetime).
/// - **Refresh ahead**: within ``staleWindow`` of the server's expiry (3 min 45 s by default) the
///   token is stale: it is still handed out at once, and the first request in that window starts
///   one fetch in the background. A background fetch that fails leaves the token in use until it
///   expires (the next one waits for ``RefreshBackoff``).
/// - **One fetch in flight**: every caller that finds no usable token while a fetch runs waits for
///   that fetch and gets its answer, so 200 calls on an expired token make one token request.
/// - **Watchdog**: a fetch that has not answered within ``fetchTimeout`` is given up: its waiters
///   get a transient error, and the next request starts a new fetch.
/// - **Backoff**: after a failed fetch, callers get the same error at once until the wait of
///   ``RefreshBackoff`` has passed; a fetched token ends the backoff.
/// - **Invalidation floor**: after a server's rejection (``invalidate(token:)``) dropped a token,
///   the next rejection drops one only ``invalidationInterval`` later, so a server that rejects
///   every call causes at most one fetch per interval, not one per call.
/// - **Two clocks**: expiry is judged on the wall clock (the server's dates) and on the continuous
///   clock (``TokenFreshness``), so a wall clock stepped backwards cannot keep an expired token.
/// - **Stopping**: an owner whose grant was refused for good (``AuthSession`` after `invalid_grant`)
///   holds ``Holding/stopped(_:)``: every request fails with that error until it holds something
///   else.
/// - **Generations**: ``reset(to:)`` starts a new generation (a new sign-in, a sign-out): a fetch of
///   the old one still in flight is no longer shared, and its owner drops its answer.
///
/// The engine never logs and never shows a token. Its owner fetches (and logs) in the closure it
/// gives ``token(fetch:)``, and tells the engine what it holds (``hold(_:)``, ``accept(_:generation:)``).
/// It reads the time (and sleeps) on its ``TokenEngineClock``, so its rules can be tested with a
/// plain closure as the fetch and a clock moved by hand.
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
        /// This token, issued at `issuedAt` and expiring at `expiresAt` (each `nil` when unknown;
        /// without an expiry the token is used until a server rejects it).
        case token(String, issuedAt: Date?, expiresAt: Date?)
        /// No usable token: the next request fetches.
        case nothing
        /// No token until the owner holds something else: every request fails with this error.
        case stopped(OAuthError)
    }

    /// The default ``staleWindow``: 3 min 45 s, as google-auth (Python), the Go and the Java
    /// Google auth libraries refresh ahead (Node's library uses 5 min).
    package static let defaultStaleWindow: Duration = .seconds(225)
    /// The default ``invalidationInterval``.
    package static let defaultInvalidationInterval: Duration = .seconds(30)
    /// The default ``fetchTimeout``: longer than a store's lock wait (30 s) plus a token request
    /// (30 s), so only a fetch that is truly stuck is given up.
    package static let defaultFetchTimeout: Duration = .seconds(120)

    /// How long before the server's expiry a fetched token stops being handed out (at most half
    /// its lifetime).
    package let expiryTolerance: Duration
    /// How long before the server's expiry a token turns stale: handed out, and refreshed in the
    /// background (at most half its lifetime; no longer than ``expiryTolerance``: never stale).
    package let staleWindow: Duration
    /// How long to wait after failed fetches before fetching again.
    package let refreshBackoff: RefreshBackoff
    /// How long after a server's rejection dropped a token the next rejection may drop one.
    package let invalidationInterval: Duration
    /// How long a fetch may run before it is given up.
    package let fetchTimeout: Duration
    private let backoffScope: BackoffScope
    private let clock: TokenEngineClock

    /// What the engine holds, with what it judged of a token when it took it in.
    private enum Held {
        case token(String, TokenFreshness)
        case nothing
        case stopped(OAuthError)
    }

    /// The fetch in flight.
    private struct InFlight {
        var id: UInt64
        var generation: UInt64
        var task: Task<Outcome, Never>
        /// When it was started, for the watchdog.
        var started: ContinuousClock.Instant
    }

    private struct State {
        var held: Held
        var generation: UInt64 = 0
        var inFlight: InFlight?
        var backoff: RefreshBackoffState?
        /// When a server's rejection last dropped a token.
        var lastInvalidation: ContinuousClock.Instant?
        /// Fetches started so far: each one's id.
        var fetchCount: UInt64 = 0
    }

    private let state: Locked<State>

    /// How many times one request looks again after its fetch was superseded; each time needs the
    /// owner's state to be replaced during the wait, so this is never reached in use.
    private static let maximumSupersededPasses = 8

    /// An engine holding `holding` at first, reading the time from `clock`.
    package init(
        holding: Holding = .nothing,
        expiryTolerance: Duration = .seconds(60),
        staleWindow: Duration = TokenEngine.defaultStaleWindow,
        refreshBackoff: RefreshBackoff = .default,
        invalidationInterval: Duration = TokenEngine.defaultInvalidationInterval,
        fetchTimeout: Duration = TokenEngine.defaultFetchTimeout,
        backoffScope: BackoffScope,
        clock: TokenEngineClock = .system
    ) {
        self.expiryTolerance = expiryTolerance
        self.staleWindow = staleWindow
        self.refreshBackoff = refreshBackoff
        self.invalidationInterval = invalidationInterval
        self.fetchTimeout = max(.milliseconds(1), fetchTimeout)
        self.backoffScope = backoffScope
        self.clock = clock
        state = Locked(State(held: .nothing))
        state.withLock { $0.held = held(holding, replacing: .nothing) }
    }

    // MARK: - Handing out tokens

    /// The held token when it can be used right now, or `nil`: no task, no actor, one lock.
    ///
    /// A stale token is answered while its refresh ahead runs (or waits out a backoff); otherwise
    /// this answers `nil`, so the caller's ``token(fetch:)`` starts that refresh (and still gets
    /// the token at once).
    package func cachedToken() -> String? {
        state.withLock { state in
            guard case .token(let token, let freshness) = state.held else { return nil }
            // A token without a known expiry costs no clock reading; a fresh one, one reading in
            // plain numbers.
            guard let bound = freshness.freshUntil, !bound.isAhead(of: clock.read()) else { return token }
            return usable(token, freshness, in: state)
        }
    }

    /// `token` when it may still be handed out though no longer fresh: stale with its refresh
    /// running or backing off. Apart from ``cachedToken()``'s fast path: the continuous clock's
    /// instants here are resilient, and a frame holding one sets it up through the runtime's
    /// metadata on entry, which a fresh token's call then need not pay.
    @inline(never)
    private func usable(_ token: String, _ freshness: TokenFreshness, in state: State) -> String? {
        let now = clock.instant()
        switch freshness.verdict(date: clock.date(), instant: now) {
        case .fresh: return token
        case .stale: return isRefreshing(state, at: now) || isBackingOff(state, at: now) ? token : nil
        case .expired: return nil
        }
    }

    /// A usable token: the held one (a stale one starts a refresh in the background), or the
    /// answer of the fetch in flight, or of a new fetch.
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

    /// A usable token from `source`: what ``token(fetch:)`` does for an owner whose tokens all
    /// come from one ``AccessTokenSource``.
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
        /// The held token: fresh, or stale with its refresh running in the background.
        case answer(String)
        /// No token: the stopping error, or the backoff's.
        case fail(OAuthError)
        /// The fetch in flight: joined, or started by this request.
        case wait(Task<Outcome, Never>)
    }

    /// The decision behind ``token(fetch:)``, under the lock: the held token (starting a refresh
    /// ahead when it is stale and none runs), a failure to hand out, or the fetch to wait for
    /// (joined, or started here so no second one can start meanwhile; `fetch` runs only when it
    /// starts one). A fetch older than ``fetchTimeout`` is not joined: a new one starts.
    package func nextStep(_ fetch: @escaping @Sendable (_ generation: UInt64) async -> Outcome) -> Step {
        state.withLock { state in
            let now = clock.instant()
            var stale: String?
            switch state.held {
            case .stopped(let error):
                return .fail(error)
            case .token(let token, let freshness):
                switch freshness.verdict(date: clock.date(), instant: now) {
                case .fresh: return .answer(token)
                case .stale: stale = token
                case .expired: break
                }
            case .nothing:
                break
            }
            if let stale {
                // Handed out whatever the refresh comes to; one refresh at a time, none while
                // backing off from a failed one.
                if !isRefreshing(state, at: now) && !isBackingOff(state, at: now) {
                    _ = start(fetch, in: &state, at: now, ahead: true)
                }
                return .answer(stale)
            }
            if let backoff = state.backoff, now < backoff.until {
                return .fail(backoff.error)
            }
            if isRefreshing(state, at: now), let inFlight = state.inFlight {
                return .wait(inFlight.task)
            }
            return .wait(start(fetch, in: &state, at: now, ahead: false))
        }
    }

    /// The fetch in flight, if any: what a test awaits to see a refresh ahead through.
    func fetchInFlight() -> Task<Outcome, Never>? {
        state.withLock { $0.inFlight?.task }
    }

    /// Whether a fetch of the current generation runs, and is not past the watchdog's bound.
    private func isRefreshing(_ state: State, at now: ContinuousClock.Instant) -> Bool {
        guard let inFlight = state.inFlight else { return false }
        return inFlight.generation == state.generation && now < inFlight.started + fetchTimeout
    }

    private func isBackingOff(_ state: State, at now: ContinuousClock.Instant) -> Bool {
        state.backoff.map { now < $0.until } ?? false
    }

    /// Starts a fetch for the current generation, as the one in flight.
    private func start(
        _ fetch: @escaping @Sendable (UInt64) async -> Outcome,
        in state: inout State,
        at now: ContinuousClock.Instant,
        ahead: Bool
    ) -> Task<Outcome, Never> {
        let generation = state.generation
        state.fetchCount &+= 1
        let id = state.fetchCount
        let task = Task { await self.run(fetch, generation: generation, id: id, ahead: ahead) }
        state.inFlight = InFlight(id: id, generation: generation, task: task, started: now)
        return task
    }

    /// Runs one fetch for everyone waiting, under the watchdog, then clears it and records its
    /// outcome for the backoff, before any waiter resumes.
    ///
    /// A refresh ahead that fails starts the backoff whatever the failure (but a cancellation):
    /// the token stays in use, and the next refresh ahead waits.
    private func run(
        _ fetch: @escaping @Sendable (UInt64) async -> Outcome,
        generation: UInt64,
        id: UInt64,
        ahead: Bool
    ) async -> Outcome {
        let outcome = await watched(fetch, generation: generation)
        state.withLock { state in
            if state.inFlight?.id == id { state.inFlight = nil }
            guard state.generation == generation else { return }
            switch outcome {
            case .token:
                state.backoff = nil
            case .failure(let error) where ahead ? !(error.underlying is CancellationError) : backsOff(after: error):
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

    /// The fetch's outcome, or a transient failure once it has run for ``fetchTimeout``: then the
    /// fetch is cancelled and its late answer dropped (a token it hands the engine is still held).
    private func watched(_ fetch: @escaping @Sendable (UInt64) async -> Outcome, generation: UInt64) async -> Outcome {
        let timeout = fetchTimeout
        let outcome = await withUnsafeContinuation { continuation in
            let watch = FetchWatch(continuation, publishingTo: self)
            let worker = Task { watch.finish(await fetch(generation)) }
            watch.setTimer(
                Task { [clock] in
                    guard (try? await clock.sleep(timeout)) != nil else { return }
                    let gaveUp = OAuthError(
                        .transient,
                        "the token request did not finish within \(timeout); gave up on it (the next request starts a new one)"
                    )
                    if watch.finish(.failure(gaveUp)) { worker.cancel() }
                }
            )
        }
        // A fetch that fails at once can resume the continuation before this task has suspended
        // (ThreadSanitizerHandoff says what TSan then cannot see).
        ThreadSanitizerHandoff.receive(self)
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

    /// Holds `holding` from now on (the owner's state changed). The token already held keeps
    /// what was judged of it when it was taken in (its expiry on the continuous clock).
    package func hold(_ holding: Holding) {
        state.withLock { $0.held = held(holding, replacing: $0.held) }
    }

    /// What to hold for `holding`, judged now.
    private func held(_ holding: Holding, replacing old: Held) -> Held {
        switch holding {
        case .nothing:
            return .nothing
        case .stopped(let error):
            return .stopped(error)
        case .token(let token, let issuedAt, let expiresAt):
            if case .token(let oldToken, _) = old, oldToken == token { return old }
            let freshness = TokenFreshness(
                issuedAt: issuedAt,
                expiresAt: expiresAt,
                tolerance: expiryTolerance,
                staleWindow: staleWindow,
                date: clock.date(),
                instant: clock.instant()
            )
            return .token(token, freshness)
        }
    }

    /// Holds a fetched token unless `generation` is no longer current.
    ///
    /// - Returns: Whether the token is now held.
    @discardableResult
    package func accept(_ fetched: FetchedAccessToken, generation: UInt64) -> Bool {
        let holding = Holding.token(fetched.accessToken, issuedAt: fetched.receivedAt, expiresAt: fetched.expiresAt)
        return state.withLock { state in
            guard state.generation == generation else { return false }
            state.held = held(holding, replacing: state.held)
            return true
        }
    }

    /// Stops handing out `token` (a server rejected it) if it is still the held one, unless a
    /// rejection dropped a token less than ``invalidationInterval`` ago (a server that rejects
    /// every call must not cause a fetch per call). When another caller already fetched past
    /// `token`, nothing changes.
    ///
    /// - Returns: Whether the token is no longer handed out because of this call.
    @discardableResult
    package func invalidate(token: String) -> Bool {
        state.withLock { state in
            guard case .token(let held, _) = state.held, held == token else { return false }
            let now = clock.instant()
            if let last = state.lastInvalidation, now - last < invalidationInterval { return false }
            state.lastInvalidation = now
            state.held = .nothing
            return true
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
            state.lastInvalidation = nil
            state.held = held(holding, replacing: .nothing)
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

/// One watched fetch: the first of its answer and the watchdog resumes the waiting run.
private final class FetchWatch: Sendable {
    // The continuation and the timer are taken under this lock, once.
    private let state:
        Locked<(continuation: UnsafeContinuation<TokenEngine.Outcome, Never>?, timer: Task<Void, Never>?)>

    /// The engine the outcome is handed to, for ThreadSanitizerHandoff.
    private let engine: TokenEngine

    init(_ continuation: UnsafeContinuation<TokenEngine.Outcome, Never>, publishingTo engine: TokenEngine) {
        state = Locked((continuation, nil))
        self.engine = engine
    }

    /// Keeps the watchdog's task, to cancel it when the fetch answers first.
    func setTimer(_ timer: Task<Void, Never>) {
        let finished = state.withLock { state in
            guard state.continuation != nil else { return true }
            state.timer = timer
            return false
        }
        if finished { timer.cancel() }
    }

    /// Resumes the run with `outcome` unless it was resumed already.
    ///
    /// - Returns: Whether this call resumed it.
    @discardableResult
    func finish(_ outcome: TokenEngine.Outcome) -> Bool {
        let (continuation, timer) = state.withLock { state in
            defer { state = (nil, nil) }
            return (state.continuation, state.timer)
        }
        timer?.cancel()
        guard let continuation else { return false }
        ThreadSanitizerHandoff.publish(engine)
        continuation.resume(returning: outcome)
        return true
    }
}
