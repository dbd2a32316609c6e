public import AuthRPC

/// Why an OAuth 2.0 operation failed, classified so a caller knows what to do next.
///
/// The classes follow what a user can act on:
/// - ``Kind/authorization(code:)``: the authorization server refused the grant (`invalid_grant`,
///   `invalid_client`, `access_denied`, …). Sign in again; retrying will not help.
/// - ``Kind/noRefreshToken``: the access token is stale and there is nothing to refresh it with.
///   Sign in again.
/// - ``Kind/transient``: the network, a timeout, a 5xx, or an answer that did not parse. Nothing
///   was changed; try again later.
/// - the others describe local problems (configuration, a flow's own rules, storage).
///
/// As an ``/AuthRPC/AuthTokenProviderError`` only ``Kind/transient`` is transient, so a call whose token
/// could not be refreshed fails `unavailable` for transient failures and `unauthenticated` for
/// the rest. Messages never contain tokens or client secrets.
public struct OAuthError: Error, Sendable, CustomStringConvertible {
    /// The class of failure.
    public enum Kind: Sendable, Hashable {
        /// The authorization server answered with this OAuth `error` code.
        case authorization(code: String)
        /// The access token is stale and there is no refresh token (or grant) to renew it.
        case noRefreshToken
        /// A failure that may pass: network, timeout, a 5xx, an unparsable answer.
        case transient
        /// The configuration is unusable (a missing endpoint, a discovery document for another issuer).
        case invalidConfiguration
        /// A sign-in flow broke one of its own rules (a `state` mismatch, a timeout, a bad redirect).
        case flowFailed
        /// A stored session could not be read or written.
        case storage
    }

    /// The class of failure.
    public var kind: Kind
    /// What happened, for people.
    public var message: String
    /// The underlying error, when there is one (never carries secrets of ours).
    public var underlying: (any Error & Sendable)?

    /// Creates an error.
    public init(_ kind: Kind, _ message: String, underlying: (any Error & Sendable)? = nil) {
        self.kind = kind
        self.message = message
        self.underlying = underlying
    }

    /// `true` when the user must sign in again: the grant was refused or cannot be renewed.
    public var requiresReauthorization: Bool {
        switch kind {
        case .authorization, .noRefreshToken: return true
        default: return false
        }
    }

    /// The OAuth `error` code, for authorization errors.
    public var oauthErrorCode: String? {
        if case .authorization(let code) = kind { return code }
        return nil
    }

    /// The ``message``: what happened, never a token or a client secret.
    public var description: String { message }
}

extension OAuthError: AuthTokenProviderError {
    /// Only transient failures may pass by themselves.
    public var isTransient: Bool { kind == .transient }
}
