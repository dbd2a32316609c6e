public import AuthRPC

/// Why an OAuth 2.0 operation failed, classified so a caller knows what to do next.
///
/// The classes follow what a user can act on:
/// - ``Kind/authorization``: the authorization server refused the grant (`invalid_grant`,
///   `invalid_client`, `access_denied`, …; the code is ``oauthErrorCode``). Sign in again;
///   retrying will not help.
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
    ///
    /// A struct rather than an enum so that later versions can add classes (for the failures of
    /// new kinds of credentials) without breaking code that compares them. Compare with `==`, or
    /// `switch` with a `default` case.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        enum Wrapped: Sendable, Hashable {
            case authorization
            case noRefreshToken
            case transient
            case invalidConfiguration
            case flowFailed
            case storage
        }

        let wrapped: Wrapped

        private init(_ wrapped: Wrapped) {
            self.wrapped = wrapped
        }

        /// The authorization server answered with an OAuth `error` code, which the error's
        /// ``OAuthError/oauthErrorCode`` holds: it refused the grant, the client or the sign-in.
        public static let authorization = Self(.authorization)
        /// The access token is stale and there is no refresh token (or grant) to renew it.
        public static let noRefreshToken = Self(.noRefreshToken)
        /// A failure that may pass: network, timeout, a 5xx, an unparsable answer.
        public static let transient = Self(.transient)
        /// The configuration is unusable (a missing endpoint, a discovery document for another issuer).
        public static let invalidConfiguration = Self(.invalidConfiguration)
        /// A sign-in flow broke one of its own rules (a `state` mismatch, a timeout, a bad redirect).
        public static let flowFailed = Self(.flowFailed)
        /// A stored session could not be read or written.
        public static let storage = Self(.storage)

        /// The class's name, as written after the dot: `authorization`, `transient`, ...
        public var description: String { String(describing: wrapped) }
    }

    /// The class of failure.
    public var kind: Kind
    /// What happened, for people.
    public var message: String
    /// The OAuth `error` code the authorization server answered with (`invalid_grant`,
    /// `access_denied`, …). Every ``Kind/authorization`` error this package makes has one; other
    /// kinds have none.
    public var oauthErrorCode: String?
    /// The underlying error, when there is one (never carries secrets of ours).
    public var underlying: (any Error & Sendable)?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - kind: The class of failure.
    ///   - message: What happened, for people; never a token or secret.
    ///   - oauthErrorCode: The OAuth `error` code of an ``Kind/authorization`` error.
    ///   - underlying: The error that caused this one, if any.
    public init(
        _ kind: Kind,
        _ message: String,
        oauthErrorCode: String? = nil,
        underlying: (any Error & Sendable)? = nil
    ) {
        self.kind = kind
        self.message = message
        self.oauthErrorCode = oauthErrorCode
        self.underlying = underlying
    }

    /// `true` when the user must sign in again: the grant was refused or cannot be renewed.
    public var requiresReauthorization: Bool {
        kind == .authorization || kind == .noRefreshToken
    }

    /// The ``message``: what happened, never a token or a client secret.
    public var description: String { message }
}

extension OAuthError: AuthTokenProviderError {
    /// Only transient failures may pass by themselves.
    public var isTransient: Bool { kind == .transient }
}
