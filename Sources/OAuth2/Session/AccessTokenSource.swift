public import Foundation

/// A way to get a new access token, one request at a time: what a token cache is fed with.
///
/// A source neither caches nor shares: every ``fetchToken()`` asks anew (a token endpoint, a
/// metadata server, or a signature made on the spot). Keeping the token while it is fresh, one
/// fetch in flight for every waiting caller and the expiry margin belong to whoever holds the
/// source. Its `description` says what it is and for whom, never a secret.
public protocol AccessTokenSource: Sendable, CustomStringConvertible {
    /// Gets a new access token.
    ///
    /// - Throws: ``OAuthError``: ``OAuthError/Kind/authorization`` when the grant is
    ///   refused, ``OAuthError/Kind/transient`` when the server could not be reached or answered
    ///   with a server error, ``OAuthError/Kind/invalidConfiguration`` when the credentials
    ///   themselves are unusable.
    func fetchToken() async throws(OAuthError) -> FetchedAccessToken
}

/// A new access token and how long it lives. Its `description` never shows the token.
public struct FetchedAccessToken: Sendable, CustomStringConvertible {
    /// The access token.
    public var accessToken: String
    /// When it was received (or, for a token made locally, issued).
    public var receivedAt: Date
    /// How long it lives from ``receivedAt``; `nil` when the server did not say.
    public var lifetime: Duration?
    /// The token type the server named (`Bearer`).
    public var tokenType: String?
    /// The scopes the server granted, when it said.
    public var grantedScopes: [String]?

    /// Creates a fetched token.
    public init(
        accessToken: String,
        receivedAt: Date,
        lifetime: Duration?,
        tokenType: String? = "Bearer",
        grantedScopes: [String]? = nil
    ) {
        self.accessToken = accessToken
        self.receivedAt = receivedAt
        self.lifetime = lifetime
        self.tokenType = tokenType
        self.grantedScopes = grantedScopes
    }

    /// When the token expires; `nil` without a known lifetime.
    public var expiresAt: Date? {
        lifetime.map { receivedAt.addingTimeInterval($0.seconds) }
    }

    /// The lifetime and scopes; never the token.
    public var description: String {
        var parts = ["accessToken: <redacted>"]
        if let lifetime { parts.append("lifetime: \(Int(lifetime.seconds)) s") }
        if let grantedScopes { parts.append("scopes: \(grantedScopes.joined(separator: " "))") }
        return "FetchedAccessToken(\(parts.joined(separator: ", ")))"
    }
}
