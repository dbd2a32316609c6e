import AuthRPC
import Foundation
import Logging
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
///   refresh token.
/// - An authorization error (`invalid_grant`, …) stops the session: it hands out no token until
///   signed in again, and it never deletes the stored session. Transient errors change nothing.
public actor AuthSession: InvalidatableAuthTokenProvider {
    /// The session's current state.
    public private(set) var state: AuthState

    /// How long before expiry a token stops counting as fresh (at most half its lifetime).
    public nonisolated let expiryTolerance: Duration

    private let store: (any AuthSessionStore)?
    let transport: any OAuthTransport
    private let logger: Logger
    private var refreshTask: Task<Result<String, OAuthError>, Never>?

    /// The token the fast path may hand out without entering the actor, and until when.
    private struct CachedToken {
        var token: String
        var freshUntil: Date?
    }

    private nonisolated let cache: Mutex<CachedToken?>
    private nonisolated let observers = Mutex<[UInt64: AsyncStream<AuthState>.Continuation]>([:])
    private nonisolated let nextObserver = Atomic<UInt64>(0)

    /// How long a refresh waits for another process holding the store's lock.
    private static let lockTimeout: Duration = .seconds(30)

    /// Creates a session from `state`.
    ///
    /// - Parameters:
    ///   - state: The session's starting state (from a sign-in flow or a store).
    ///   - store: Where every change is saved (refreshed tokens, an authorization error). `nil`
    ///     keeps the state in memory; observe ``stateChanges()`` to persist it yourself.
    ///   - transport: How requests reach the token endpoint.
    ///   - expiryTolerance: How long before expiry a token is refreshed; 60 s by default.
    ///   - logger: Where refreshes and failures are logged (never a token or secret).
    public init(
        state: AuthState,
        store: (any AuthSessionStore)? = nil,
        transport: any OAuthTransport = URLSessionOAuthTransport(),
        expiryTolerance: Duration = .seconds(60),
        logger: Logger = Logger(label: "swift-authrpc.oauth2")
    ) {
        self.state = state
        self.store = store
        self.transport = transport
        self.expiryTolerance = expiryTolerance
        self.logger = logger
        self.cache = Mutex(Self.cacheEntry(for: state, tolerance: expiryTolerance))
    }

    /// The session saved in `store`, or `nil` when the store holds none.
    ///
    /// - Throws: ``OAuthError/Kind/storage`` when the stored session cannot be read.
    public static func restore(
        from store: any AuthSessionStore,
        transport: any OAuthTransport = URLSessionOAuthTransport(),
        expiryTolerance: Duration = .seconds(60),
        logger: Logger = Logger(label: "swift-authrpc.oauth2")
    ) throws(OAuthError) -> AuthSession? {
        guard let state = try store.retrieve() else { return nil }
        return AuthSession(state: state, store: store, transport: transport, expiryTolerance: expiryTolerance, logger: logger)
    }

    // MARK: - Tokens

    /// A fresh access token, refreshing first when the current one is stale or about to expire.
    ///
    /// - Throws: ``OAuthError``: an authorization error or ``OAuthError/Kind/noRefreshToken``
    ///   when the user must sign in again, ``OAuthError/Kind/transient`` when the token endpoint
    ///   could not be reached (nothing was changed).
    public func freshAccessToken() async throws(OAuthError) -> String {
        if let error = state.authorizationError {
            throw Self.stopped(by: error)
        }
        if state.isAccessTokenFresh(tolerance: expiryTolerance), let token = state.accessToken {
            return token
        }
        let task: Task<Result<String, OAuthError>, Never>
        if let refreshTask {
            task = refreshTask
        } else {
            task = Task { await self.refreshOnce() }
            refreshTask = task
        }
        return try await task.value.get()
    }

    /// The access token for a call: ``freshAccessToken()``.
    public func token() async throws -> String {
        try await freshAccessToken()
    }

    /// The current token when it is fresh, without entering the actor: calls with a fresh token
    /// cost no more than calls with a static one.
    public nonisolated func cachedToken() -> String? {
        cache.withLock { entry in
            guard let entry else { return nil }
            if let freshUntil = entry.freshUntil, Date() >= freshUntil { return nil }
            return entry.token
        }
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

    /// Runs one refresh for every caller waiting now; clears itself when done.
    private func refreshOnce() async -> Result<String, OAuthError> {
        defer { refreshTask = nil }
        do throws(OAuthError) {
            if let shared = store as? any SharedAuthSessionStore {
                return .success(try await shared.withExclusiveAccess(timeout: Self.lockTimeout) { () async throws(OAuthError) -> String in
                    try await self.refreshHoldingLock(shared)
                })
            }
            return .success(try await refresh())
        } catch {
            return .failure(error)
        }
    }

    /// Under the store's lock: adopt what another process saved meanwhile, refresh only if that
    /// is not fresh either.
    private func refreshHoldingLock(_ shared: any SharedAuthSessionStore) async throws(OAuthError) -> String {
        do throws(OAuthError) {
            if let stored = try shared.retrieve(), stored.client.id == state.client.id,
               stored.refreshToken != state.refreshToken || stored.accessToken != state.accessToken {
                logger.debug("adopting the session another process saved", metadata: ["client": "\(state.client.id)"])
                state = stored
                stateDidChange(save: false)
                if let error = stored.authorizationError { throw Self.stopped(by: error) }
                if stored.isAccessTokenFresh(tolerance: expiryTolerance), let token = stored.accessToken { return token }
            }
        } catch where error.kind == .storage {
            // An unreadable store must not stop a session that holds its own refresh token.
            logger.warning("could not re-read the stored session before refreshing", metadata: ["error": "\(error)"])
        }
        return try await refresh()
    }

    /// Asks the token endpoint for a new access token and takes the answer in.
    private func refresh() async throws(OAuthError) -> String {
        let endpoint = TokenEndpoint(configuration: state.configuration, client: state.client, transport: transport)
        let answer: Result<TokenResponse, InvalidTokenResponse>
        do throws(OAuthError) {
            if let refreshToken = state.refreshToken {
                logger.debug("refreshing the access token", metadata: ["client": "\(state.client.id)"])
                answer = try await endpoint.refresh(refreshToken)
            } else if state.grant.type == .clientCredentials {
                logger.debug("renewing the client-credentials token", metadata: ["client": "\(state.client.id)"])
                answer = .success(try await endpoint.clientCredentials(scopes: state.scopes))
            } else {
                throw OAuthError(.noRefreshToken, "the access token is \(state.accessToken == nil ? "missing" : "expired, rejected or unusable") and the session has no refresh token; sign in again")
            }
        } catch {
            if case .authorization(let code) = error.kind {
                logger.warning("the authorization server refused to refresh; sign in again", metadata: ["client": "\(state.client.id)", "error": "\(code)"])
                state.authorizationError = AuthorizationErrorRecord(code: code, description: error.message)
                stateDidChange(save: true)
            } else {
                logger.debug("refreshing failed; will try again on the next request", metadata: ["client": "\(state.client.id)", "error": "\(error)"])
            }
            throw error
        }
        switch answer {
        case .success(let response):
            state.apply(response, receivedAt: Date())
            stateDidChange(save: true)
            return response.accessToken
        case .failure(let invalid):
            // The server may have spent the old refresh token when it rotated it: keep the new
            // one even though the rest of the answer is unusable, or the next refresh would fail
            // with invalid_grant and sign the user out (see InvalidTokenResponse).
            if let rotated = invalid.rotatedRefreshToken {
                logger.warning("kept the rotated refresh token from an unusable token response", metadata: ["client": "\(state.client.id)"])
                state.refreshToken = rotated
                state.isAccessTokenStale = true
                stateDidChange(save: true)
            }
            let error = endpoint.unusable(invalid)
            logger.debug("refreshing failed; will try again on the next request", metadata: ["client": "\(state.client.id)", "error": "\(error)"])
            throw error
        }
    }

    private static func stopped(by error: AuthorizationErrorRecord) -> OAuthError {
        OAuthError(.authorization(code: error.code),
                   "the session was stopped by an authorization error (\(error.code)); sign in again")
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

    /// Replaces the state (after signing in again, say): saved, published, and any
    /// authorization error forgotten with the old state.
    public func replaceState(_ newState: AuthState) {
        state = newState
        stateDidChange(save: true)
    }

    /// Refreshes the fast path, saves when asked, and tells the observers.
    private func stateDidChange(save: Bool) {
        let entry = Self.cacheEntry(for: state, tolerance: expiryTolerance)
        cache.withLock { $0 = entry }
        if save, let store {
            do throws(OAuthError) {
                try store.save(state)
            } catch {
                logger.error("could not save the session", metadata: ["error": "\(error)"])
            }
        }
        let state = self.state
        for continuation in observers.withLock({ Array($0.values) }) {
            continuation.yield(state)
        }
    }

    private static func cacheEntry(for state: AuthState, tolerance: Duration) -> CachedToken? {
        guard state.authorizationError == nil, state.isAccessTokenFresh(tolerance: tolerance), let token = state.accessToken else { return nil }
        return CachedToken(token: token, freshUntil: state.freshUntil(tolerance: tolerance))
    }

    // MARK: - Identity

    /// The user's subject identifier (`sub`) from the ID token.
    public var userID: String? { state.userID }
    /// The user's email address from the ID token.
    public var userEmail: String? { state.userEmail }
    /// Whether the issuer verified the email address (`email_verified`).
    public var userEmailIsVerified: Bool? { state.userEmailIsVerified }
}
