import Foundation
public import Logging
public import OAuth2

/// ID tokens for a service account from its key, through Google's token endpoint: the JWT bearer
/// grant (RFC 7523) with an assertion that carries `target_audience` instead of scopes, answered
/// with `{"id_token": "…"}` — what google-auth's service-account ID-token credentials send.
///
/// Each ``fetchToken()`` signs a new assertion and asks once; the token's lifetime is read from
/// its own `exp`. Hold it in ``GoogleCredentials`` to cache tokens and send them as
/// `Authorization: Bearer` to a private Cloud Run or IAP-fronted service. The assertion and the
/// token never appear in a log line, a `description` or an error.
public struct ServiceAccountIDTokenSource: GoogleTokenSource {
    /// The key that signs the assertions.
    public let key: ServiceAccountKey
    /// The audience the tokens are for: the receiving service's URL (Cloud Run) or OAuth client
    /// id (IAP).
    public let audience: String

    private let transport: any OAuthTransport
    private let logger: Logger

    /// A source for `key` and `audience`.
    ///
    /// - Throws: ``/OAuth2/OAuthError/Kind/invalidConfiguration`` when `audience` is empty, longer
    ///   than 2048 bytes or has whitespace.
    public init(
        key: ServiceAccountKey,
        audience: String,
        transport: any OAuthTransport = HTTP1OAuthTransport.standard,
        logger: Logger = Logger(label: "swift-authrpc.google")
    ) throws(OAuthError) {
        try IDTokenAudience.check(audience)
        self.key = key
        self.audience = audience
        self.transport = transport
        self.logger = logger
    }

    /// Signs an assertion for ``audience`` and exchanges it for an ID token at the key's `token_uri`.
    ///
    /// - Throws: ``/OAuth2/OAuthError``: an authorization error when the token endpoint refuses the
    ///   assertion, ``/OAuth2/OAuthError/Kind/transient`` when it cannot be reached or answers
    ///   without an ID token that is a JWT with an `exp`.
    public func fetchToken() async throws(OAuthError) -> FetchedAccessToken {
        let assertion = try makeAssertion(issuedAt: Date())
        logger.debug(
            "asking for a service-account ID token",
            metadata: ["account": "\(key.clientEmail)", "audience": "\(audience)"]
        )
        let (token, receivedAt) = try await GrantRequest.requestIDToken(
            at: key.tokenURI,
            parameters: [("grant_type", ServiceAccountTokenSource.grantType), ("assertion", assertion)],
            secrets: [assertion],
            transport: transport
        )
        return try IDTokenExpiry.fetched(
            token,
            receivedAt: receivedAt,
            from: "the token endpoint \(GrantRequest.redacted(key.tokenURI))"
        )
    }

    /// The signed assertion for a request made at `issuedAt`.
    func makeAssertion(issuedAt: Date) throws(OAuthError) -> String {
        let now = Int(issuedAt.timeIntervalSince1970)
        let claims = JWTClaims(
            iss: key.clientEmail,
            aud: key.tokenURI.absoluteString,
            targetAudience: audience,
            iat: now,
            exp: now + Int(ServiceAccountTokenSource.assertionLifetime.components.seconds)
        )
        return try key.signedJWT(claims)
    }

    /// The account.
    public var identity: GoogleCredentialIdentity { key.identity }

    /// The account, the audience and the endpoint; never the key, an assertion or a token.
    public var description: String {
        "ServiceAccountIDTokenSource(\(key.clientEmail), audience \(audience), token_uri \(GrantRequest.redacted(key.tokenURI)))"
    }
}
