import Foundation
public import Logging
public import OAuth2

/// Access tokens for a service account from its key's token endpoint, through the JWT bearer
/// grant (RFC 7523) as Google's token endpoint takes it: an RS256 assertion with `iss` the
/// account, `aud` the token endpoint, the scopes in a `scope` claim, and an optional `sub` for
/// domain-wide delegation.
///
/// Each ``fetchToken()`` signs a new assertion (valid for an hour) and asks once; caching belongs
/// to the holder. The assertion never appears in a log line, a `description` or an error.
public struct ServiceAccountTokenSource: GoogleTokenSource {
    /// The grant type of RFC 7523 section 2.1.
    public static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    /// How long an assertion is valid: Google's limit.
    public static let assertionLifetime: Duration = .seconds(3600)

    /// The key that signs the assertions.
    public let key: ServiceAccountKey
    /// The scopes asked for.
    public let scopes: [String]
    /// The user to act for (domain-wide delegation), or `nil` for the account itself.
    public let subject: String?

    private let transport: any OAuthTransport
    private let logger: Logger

    /// A source for `key` with `scopes`.
    ///
    /// - Parameters:
    ///   - key: The key that signs the assertions and names the token endpoint (`token_uri`).
    ///   - scopes: The scopes asked for; at least one.
    ///   - subject: A user's email to act for, when the account has domain-wide delegation.
    ///   - transport: How the request reaches the token endpoint.
    ///   - logger: Where fetches are logged (never the assertion or a token).
    /// - Throws: ``/OAuth2/OAuthError/Kind/invalidConfiguration`` without scopes (Google grants no
    ///   access token without one) or with a scope or subject that cannot go in a JWT.
    public init(
        key: ServiceAccountKey,
        scopes: [String],
        subject: String? = nil,
        transport: any OAuthTransport = HTTP1OAuthTransport.standard,
        logger: Logger = Logger(label: "swift-authrpc.google")
    ) throws(OAuthError) {
        guard !scopes.isEmpty else {
            throw OAuthError(.invalidConfiguration, "a service account needs at least one scope to get an access token")
        }
        for scope in scopes where scope.isEmpty || scope.contains(where: { $0 == " " || $0.isNewline }) {
            throw OAuthError(.invalidConfiguration, "scope \"\(scope.prefix(80))\" is empty or contains a space")
        }
        if let subject, subject.isEmpty || subject.contains(where: { $0.isWhitespace }) {
            throw OAuthError(.invalidConfiguration, "the subject to act for is empty or contains whitespace")
        }
        self.key = key
        self.scopes = scopes
        self.subject = subject
        self.transport = transport
        self.logger = logger
    }

    /// Signs an assertion and exchanges it for an access token at the key's `token_uri`.
    ///
    /// - Throws: ``/OAuth2/OAuthError``: an authorization error when the token endpoint refuses the
    ///   assertion (`invalid_grant`: a revoked key, a wrong clock, an unknown subject),
    ///   ``/OAuth2/OAuthError/Kind/transient`` when it cannot be reached.
    public func fetchToken() async throws(OAuthError) -> FetchedAccessToken {
        let assertion = try makeAssertion(issuedAt: Date())
        logger.debug(
            "asking for a service-account token",
            metadata: [
                "account": "\(key.clientEmail)", "endpoint": "\(GrantRequest.redacted(key.tokenURI))",
            ]
        )
        return try await GrantRequest.requestToken(
            at: key.tokenURI,
            parameters: [("grant_type", Self.grantType), ("assertion", assertion)],
            client: nil,
            secrets: [assertion],
            transport: transport
        )
    }

    /// The signed assertion for a request made at `issuedAt`.
    func makeAssertion(issuedAt: Date) throws(OAuthError) -> String {
        let now = Int(issuedAt.timeIntervalSince1970)
        let claims = JWTClaims(
            iss: key.clientEmail,
            sub: subject,
            aud: key.tokenURI.absoluteString,
            scope: scopes.joined(separator: " "),
            iat: now,
            exp: now + Int(Self.assertionLifetime.components.seconds)
        )
        return try key.signedJWT(claims)
    }

    /// The account (and the user it acts for).
    public var identity: GoogleCredentialIdentity { key.identity }

    /// The account, the subject, the scopes and the endpoint; never the key or an assertion.
    public var description: String {
        var text = "ServiceAccountTokenSource(\(key.clientEmail)"
        if let subject { text += " acting for \(subject)" }
        return text + ", scopes: \(scopes.joined(separator: " ")), token_uri \(GrantRequest.redacted(key.tokenURI)))"
    }
}
