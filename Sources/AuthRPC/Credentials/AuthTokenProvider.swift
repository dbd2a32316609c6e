/// Supplies the OAuth 2.0 access token for a call.
///
/// A channel asks its provider once per call, when the call starts, and sends the answer as
/// `authorization: Bearer <token>`. The request runs under the call's deadline and cancellation:
/// a provider that never answers ends the call with `deadlineExceeded` (or `cancelled`) and its
/// late answer is dropped.
///
/// A provider that throws fails the call before anything is sent: with `unavailable` when the
/// error is an ``AuthTokenProviderError`` whose ``AuthTokenProviderError/isTransient`` is `true`,
/// with the error's own code when it is an ``RPCError``, and with `unauthenticated` otherwise.
/// The thrown error is kept as the ``RPCError/cause``.
public protocol AuthTokenProvider: Sendable {
    /// Returns an access token for one call.
    func token() async throws -> String

    /// Returns a token that is known to be fresh right now, without waiting, or `nil`.
    ///
    /// A channel calls this first on every call; when it answers, ``token()`` is not called.
    /// Providers that keep a cached token (such as an OAuth session) implement it so a call with a
    /// cached token costs no more than a call with a static token. The default returns `nil`.
    func cachedToken() -> String?

    /// Returns an access token for the call `context` describes (its `:authority` and method).
    ///
    /// This is what a channel calls. The default ignores the call and returns ``token()``; a
    /// provider whose token depends on the service (a self-signed JWT for `https://<host>/`)
    /// implements it.
    func token(for context: AuthTokenContext) async throws -> String

    /// ``cachedToken()`` for the call `context` describes; a channel asks this first. The default
    /// returns ``cachedToken()``.
    func cachedToken(for context: AuthTokenContext) -> String?

    /// Request metadata this provider adds to every call it authorizes (Google's
    /// `x-goog-user-project`), after the caller's own; a key the caller set keeps the caller's
    /// value. It is checked like ``CallOptions/initialMetadata``: a pair gRPC does not allow fails
    /// the call with `invalidArgument` before anything is sent. The default is empty.
    var requestMetadata: Metadata { get }
}

extension AuthTokenProvider {
    /// No cached token: the channel always calls ``token()``.
    public func cachedToken() -> String? { nil }
}

/// A token provider that can be told a token was rejected.
///
/// When a server answers `unauthenticated` to a call whose token came from such a provider, the
/// channel calls ``invalidate(token:)`` and retries the call once with the token it gets next,
/// within the same deadline (``CallOptions/retriesUnauthenticatedOnce`` turns this off). Like
/// the token request, ``invalidate(token:)`` runs under the call's deadline and cancellation: a
/// provider slow to return ends the call with `deadlineExceeded` (or `cancelled`).
public protocol InvalidatableAuthTokenProvider: AuthTokenProvider {
    /// Marks `token` as no longer usable, so the next ``AuthTokenProvider/token()`` fetches a new one.
    ///
    /// Does nothing when the provider has already moved past `token` (another caller refreshed it).
    func invalidate(token: String) async
}

/// An error from an ``AuthTokenProvider`` that says whether trying again later may succeed.
public protocol AuthTokenProviderError: Error {
    /// `true` for failures that may pass (network down, timeout, server error): the call fails
    /// `unavailable`. `false` for definite authorization failures (the grant was revoked, the
    /// client is unknown): the call fails `unauthenticated`.
    var isTransient: Bool { get }
}
