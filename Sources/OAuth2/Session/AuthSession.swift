public import AuthRPC
import AuthRPCSystem
import Foundation
public import Logging
import Synchronization

/// An OAuth 2.0 session: hands out fresh access tokens, refreshing them when needed, and plugs
/// into a channel as the call's token provider.
///
/// ```swift
/// let session = try AuthSession.restore(from: FileAuthSessionStore(name: "default"))!
/// var options = CallOptions()
/// options.authTokenProvider = session
/// let response = try await client.unaryCall(request, options: options)
/// ```
///
/// - A token is fresh when present, a valid Bearer token, not marked stale, and expiring more
///   than ``expiryTolerance`` from now (at most half its lifetime, so short-lived tokens are
///   still used).
/// - Otherwise it refreshes: **one refresh in flight, shared by every caller waiting at that
///   moment**. A rotated refresh token replaces the old one, and the new state is saved to the
///   store and published on ``stateChanges()``, before any waiter resumes.
/// - With a ``SharedAuthSessionStore`` (the file store), a refresh happens under the store's
///   inter-process lock after re-reading it, so two processes never spend the same rotated
///   refresh token, and a sign-in (or sign-out) another process saved meanwhile wins over the
///   old grant's refresh.
/// - A refresh whose state was replaced while it waited (``replaceState(_:)``, ``revoke()``)
///   is dropped: neither its tokens nor its error touch the new state.
/// - An authorization error (`invalid_grant`, …) stops the session: it hands out no token until
///   signed in again, and it never deletes the stored session. Transient errors change nothing,
///   and the next attempts wait for ``refreshBackoff``.
///
/// The fast path, the shared refresh, the expiry margin and the backoff are the package's one
/// token engine, which the Google credentials (GoogleAuth) run on too.
public actor AuthSession: InvalidatableAuthTokenProvider {
    /// The session's current state.
    public private(set) var state: AuthState

    /// How long before expiry a token stops counting as fresh (at most half its lifetime).
    public nonisolated let expiryTolerance: Duration

    /// How long to wait after transient refresh failures before asking the token endpoint again.
    public nonisolated let refreshBackoff: RefreshBackoff

    private let store: (any AuthSessionStore)?
    let transport: any OAuthTransport
    private let logger: Logger

    /// The fast path, the refresh in flight, the backoff and the generation. The generation is
    /// bumped whenever the state is replaced as a whole (a new sign-in, a sign-out): a refresh
    /// records it before its first await and drops its answer if it changed meanwhile.
    private nonisolated let engine: TokenEngine
    /// Whether the state's sign-in is known to be in the store (found there, saved to it, or
    /// adopted from it). A store that then holds nothing, or another sign-in, was changed by
    /// someone else; until then, the session's state is the newer one.
    private var isPersisted: Bool

    /// What one refresh came to (`superseded`: the state was replaced while it waited).
    typealias RefreshOutcome = TokenEngine.Outcome

    private nonisolated let observers = Locked<[UInt64: AsyncStream<AuthState>.Continuation]>([:])
    private nonisolated let nextObserver = Atomic<UInt64>(0)

    /// How long a refresh (or a replacement) waits for another holder of the store's lock.
    private static let lockTimeout: Duration = .seconds(30)

    /// Creates a session from `state`.
    ///
    /// When `store` already holds this sign-in (the same grant), the session counts as stored
    /// there: should the store later hold nothing, another process signed out, and the session
    /// follows instead of saving its state back. Otherwise `state` is newer than what the store
    /// holds, and its first save replaces it.
    ///
    /// - Parameters:
    ///   - state: The session's starting state (from a sign-in flow or a store).
    ///   - store: Where every change is saved (refreshed tokens, an authorization error). `nil`
    ///     keeps the state in memory; observe ``stateChanges()`` to persist it yourself.
    ///   - transport: How requests reach the token endpoint.
    ///   - expiryTolerance: How long before expiry a token is refreshed; 60 s by default.
    ///   - refreshBackoff: How long to wait after transient refresh failures.
    ///   - logger: Where refreshes and failures are logged (never a token or secret).
    public init(
        state: AuthState,
        store: (any AuthSessionStore)? = nil,
        transport: any OAuthTransport = HTTP1OAuthTransport.standard,
        expiryTolerance: Duration = .seconds(60),
        refreshBackoff: RefreshBackoff = .default,
        logger: Logger = Logger(label: "swift-authrpc.oauth2")
    ) {
        var isPersisted = false
        if let store, let stored = try? store.retrieve() {
            isPersisted = stored.grant.id == state.grant.id
        }
        self.init(
            state: state,
            store: store,
            isPersisted: isPersisted,
            transport: transport,
            expiryTolerance: expiryTolerance,
            refreshBackoff: refreshBackoff,
            logger: logger
        )
    }

    private init(
        state: AuthState,
        store: (any AuthSessionStore)?,
        isPersisted: Bool,
        transport: any OAuthTransport,
        expiryTolerance: Duration,
        refreshBackoff: RefreshBackoff,
        logger: Logger
    ) {
        self.state = state
        self.store = store
        self.isPersisted = isPersisted
        self.transport = transport
        self.expiryTolerance = expiryTolerance
        self.refreshBackoff = refreshBackoff
        self.logger = logger
        self.engine = TokenEngine(
            holding: Self.holding(for: state, tolerance: expiryTolerance),
            expiryTolerance: expiryTolerance,
            refreshBackoff: refreshBackoff,
            backoffScope: .transientFailures
        )
    }

    /// The session saved in `store`, or `nil` when the store holds none.
    ///
    /// - Throws: ``OAuthError/Kind/storage`` when the stored session cannot be read.
    public static func restore(
        from store: any AuthSessionStore,
        transport: any OAuthTransport = HTTP1OAuthTransport.standard,
        expiryTolerance: Duration = .seconds(60),
        refreshBackoff: RefreshBackoff = .default,
        logger: Logger = Logger(label: "swift-authrpc.oauth2")
    ) throws(OAuthError) -> AuthSession? {
        guard let state = try store.retrieve() else { return nil }
        return AuthSession(
            state: state,
            store: store,
            isPersisted: true,
            transport: transport,
            expiryTolerance: expiryTolerance,
            refreshBackoff: refreshBackoff,
            logger: logger
        )
    }

    // MARK: - Tokens

    /// A fresh access token, refreshing first when the current one is stale or about to expire.
    ///
    /// - Throws: ``OAuthError``: an authorization error or ``OAuthError/Kind/noRefreshToken``
    ///   when the user must sign in again, ``OAuthError/Kind/transient`` when the token endpoint
    ///   could not be reached or answered something unusable (nothing was changed; during the
    ///   backoff that follows, the same error comes back at once).
    public nonisolated func freshAccessToken() async throws(OAuthError) -> String {
        try await engine.token { generation in await self.refreshOnce(generation: generation) }
    }

    /// The access token for a call: ``freshAccessToken()``.
    public nonisolated func token() async throws -> String {
        try await freshAccessToken()
    }

    /// The current token when it is fresh, without entering the actor: calls with a fresh token
    /// cost no more than calls with a static one.
    public nonisolated func cachedToken() -> String? {
        engine.cachedToken()
    }

    /// Marks the current access token stale: the next request for a token refreshes.
    public func invalidate() {
        guard state.accessToken != nil, !state.isAccessTokenStale else { return }
        state.isAccessTokenStale = true
        stateDidChange(save: false)
    }

    /// Marks `token` stale if it is still the current one (a server rejected it). When another
    /// caller already refreshed past it, nothing changes.
    public func invalidate(token: String) {
        guard state.accessToken == token else { return }
        invalidate()
    }

    // MARK: - Refreshing

    /// Runs one refresh for every caller waiting now (the engine shares it and records its
    /// outcome for the backoff).
    private func refreshOnce(generation: UInt64) async -> RefreshOutcome {
        guard let shared = store as? any SharedAuthSessionStore else {
            return await refresh(generation: generation, shared: nil)
        }
        do throws(OAuthError) {
            return try await shared.withExclusiveAccess(timeout: Self.lockTimeout) {
                () async throws(OAuthError) -> RefreshOutcome in
                await self.refreshHoldingLock(shared, generation: generation)
            }
        } catch {
            return engine.isCurrent(generation) ? .failure(error) : .superseded
        }
    }

    /// Under the store's lock: adopt what another process saved meanwhile (a refreshed token, or
    /// another sign-in), refresh only if that is not fresh either.
    private func refreshHoldingLock(_ shared: any SharedAuthSessionStore, generation: UInt64) async -> RefreshOutcome {
        guard engine.isCurrent(generation) else { return .superseded }
        switch readStore(shared).beforeRefresh(tolerance: expiryTolerance, now: Date()) {
        case .signOut:
            return signedOutElsewhere()
        case .adoptStopped(let stored, let error):
            adopt(stored)
            return .failure(Self.stopped(by: error))
        case .adoptFreshToken(let stored, let token):
            adopt(stored)
            return .token(token)
        case .adoptAndRefresh(let stored):
            adopt(stored)
        case .refresh:
            break
        }
        return await refresh(generation: generation, shared: shared)
    }

    /// What the token endpoint answered a refresh (or a client-credentials renewal).
    private enum RefreshAnswer {
        /// A token response that passed every check.
        case tokens(TokenResponse)
        /// A 2xx answer that breaks the rules of a token response; it may still carry a rotated
        /// refresh token.
        case unusable(InvalidTokenResponse)
        /// No answer, or a refusal.
        case failed(OAuthError)
    }

    /// Asks the token endpoint for a new access token and takes the answer in, unless the state
    /// it was asked for is no longer the session's.
    private func refresh(generation: UInt64, shared: (any SharedAuthSessionStore)?) async -> RefreshOutcome {
        let endpoint = TokenEndpoint(configuration: state.configuration, client: state.client, transport: transport)
        let grantID = state.grant.id
        let answer: RefreshAnswer
        do throws(OAuthError) {
            if let refreshToken = state.refreshToken {
                logger.debug("refreshing the access token", metadata: ["client": "\(state.client.id)"])
                switch try await endpoint.refresh(refreshToken) {
                case .success(let response): answer = .tokens(response)
                case .failure(let invalid): answer = .unusable(invalid)
                }
            } else if state.grant.type == .clientCredentials {
                logger.debug("renewing the client-credentials token", metadata: ["client": "\(state.client.id)"])
                answer = .tokens(try await endpoint.clientCredentials(scopes: state.scopes))
            } else {
                return .failure(
                    OAuthError(
                        .noRefreshToken,
                        "the access token is \(state.accessToken == nil ? "missing" : "expired, rejected or unusable") and the session has no refresh token; sign in again"
                    )
                )
            }
        } catch {
            answer = .failed(error)
        }

        // After the await: the answer belongs to the grant it was asked for, and only counts if
        // that is still the session's (in this process, and in the store).
        guard engine.isCurrent(generation), state.grant.id == grantID else {
            logger.debug(
                "dropping a refresh for a session that was replaced meanwhile",
                metadata: ["client": "\(state.client.id)"]
            )
            return .superseded
        }
        if let shared {
            switch readStore(shared).afterAnswer(forGrant: grantID) {
            case .signOut:
                return signedOutElsewhere()
            case .adoptNewSignIn(let stored):
                logger.debug(
                    "dropping a refresh: another process saved a new sign-in meanwhile",
                    metadata: ["client": "\(state.client.id)"]
                )
                adopt(stored)
                return .superseded
            case .takeAnswer:
                break
            }
        }

        switch answer {
        case .tokens(let response):
            state.apply(response, receivedAt: Date())
            stateDidChange(save: true)
            return .token(response.accessToken)
        case .unusable(let invalid):
            // The server may have spent the old refresh token when it rotated it: keep the new
            // one even though the rest of the answer is unusable, or the next refresh would fail
            // with invalid_grant and sign the user out (see InvalidTokenResponse).
            if let rotated = invalid.rotatedRefreshToken {
                logger.warning(
                    "kept the rotated refresh token from an unusable token response",
                    metadata: ["client": "\(state.client.id)"]
                )
                state.refreshToken = rotated
                state.isAccessTokenStale = true
                stateDidChange(save: true)
            }
            let error = endpoint.unusable(invalid)
            logger.debug(
                "refreshing failed; will try again later",
                metadata: ["client": "\(state.client.id)", "error": "\(error)"]
            )
            return .failure(error)
        case .failed(let error):
            if error.kind == .authorization {
                // Every authorization error of the token endpoint carries its code.
                let code = error.oauthErrorCode ?? "unknown"
                logger.warning(
                    "the authorization server refused to refresh; sign in again",
                    metadata: ["client": "\(state.client.id)", "error": "\(code)"]
                )
                state.authorizationError = AuthorizationErrorRecord(code: code, description: error.message)
                stateDidChange(save: true)
            } else {
                logger.debug(
                    "refreshing failed; will try again later",
                    metadata: ["client": "\(state.client.id)", "error": "\(error)"]
                )
            }
            return .failure(error)
        }
    }

    /// What the shared store holds, compared with the session's state.
    private func readStore(_ shared: any SharedAuthSessionStore) -> StoreReading {
        do throws(OAuthError) {
            return StoreReading(stored: try shared.retrieve(), current: state, isPersisted: isPersisted)
        } catch {
            logger.warning("could not re-read the stored session while refreshing", metadata: ["error": "\(error)"])
            return .unreadable
        }
    }

    /// Takes in what another process saved.
    private func adopt(_ stored: AuthState) {
        logger.debug("adopting the session another process saved", metadata: ["client": "\(stored.client.id)"])
        if stored.grant.id != state.grant.id {
            engine.endBackoff()
        }
        state = stored
        isPersisted = true
        stateDidChange(save: false)
    }

    /// The store no longer holds the session: someone signed out. Forget the tokens here too
    /// (without saving, which would bring the file back).
    private func signedOutElsewhere() -> RefreshOutcome {
        logger.debug(
            "the stored session was removed by another process; signing out here too",
            metadata: ["client": "\(state.client.id)"]
        )
        state.accessToken = nil
        state.accessTokenExpiresAt = nil
        state.refreshToken = nil
        state.idToken = nil
        stateDidChange(save: false)
        return .failure(
            OAuthError(.noRefreshToken, "the stored session was removed (signed out) while refreshing; sign in again")
        )
    }

    private static func stopped(by error: AuthorizationErrorRecord) -> OAuthError {
        OAuthError(
            .authorization,
            "the session was stopped by an authorization error (\(error.code)); sign in again",
            oauthErrorCode: error.code
        )
    }

    // MARK: - State changes

    /// A stream of every new state (refreshed tokens, a stale mark, an authorization error),
    /// for callers that persist sessions themselves. Each call returns a new stream; a slow
    /// reader sees the latest state rather than every intermediate one.
    public nonisolated func stateChanges() -> AsyncStream<AuthState> {
        let id = nextObserver.wrappingAdd(1, ordering: .relaxed).oldValue
        let (stream, continuation) = AsyncStream<AuthState>.makeStream(bufferingPolicy: .bufferingNewest(1))
        continuation.onTermination = { [weak self] _ in
            _ = self?.observers.withLock { $0.removeValue(forKey: id) }
        }
        observers.withLock { $0[id] = continuation }
        return stream
    }

    /// Replaces the state (after signing in again, or signing out): saved under the store's lock,
    /// published, and any authorization error and backoff forgotten with the old state. A refresh
    /// of the old state still in flight is dropped when it answers.
    public func replaceState(_ newState: AuthState) async {
        state = newState
        let expected = engine.reset(to: Self.holding(for: newState, tolerance: expiryTolerance))
        guard let shared = store as? any SharedAuthSessionStore else {
            stateDidChange(save: true)
            return
        }
        stateDidChange(save: false)
        do throws(OAuthError) {
            try await shared.withExclusiveAccess(timeout: Self.lockTimeout) { () async throws(OAuthError) in
                await self.saveIfCurrent(generation: expected)
            }
        } catch {
            logger.error("could not save the session", metadata: ["error": "\(error)"])
        }
    }

    /// Saves the state if no newer replacement came while waiting for the lock (that one saves).
    private func saveIfCurrent(generation: UInt64) {
        guard engine.isCurrent(generation) else { return }
        save()
    }

    /// Tells the engine what the state now holds, saves when asked, and tells the observers.
    private func stateDidChange(save shouldSave: Bool) {
        engine.hold(Self.holding(for: state, tolerance: expiryTolerance))
        if shouldSave { save() }
        let state = self.state
        for continuation in observers.withLock({ Array($0.values) }) {
            continuation.yield(state)
        }
    }

    private func save() {
        guard let store else { return }
        do throws(OAuthError) {
            try store.save(state)
            isPersisted = true
        } catch {
            logger.error("could not save the session", metadata: ["error": "\(error)"])
        }
    }

    /// What the engine may hand out for `state`: its token while fresh, nothing (refresh), or
    /// the authorization error that stopped it.
    private static func holding(for state: AuthState, tolerance: Duration) -> TokenEngine.Holding {
        if let error = state.authorizationError { return .stopped(stopped(by: error)) }
        guard state.isAccessTokenFresh(tolerance: tolerance), let token = state.accessToken else { return .nothing }
        return .token(token, freshUntil: state.freshUntil(tolerance: tolerance))
    }

    // MARK: - Identity

    /// The user's subject identifier (`sub`) from the ID token.
    public var userID: String? { state.userID }
    /// The user's email address from the ID token.
    public var userEmail: String? { state.userEmail }
    /// Whether the issuer verified the email address (`email_verified`).
    public var userEmailIsVerified: Bool? { state.userEmailIsVerified }
}
