public import AuthRPC
public import Foundation
public import Logging
public import OAuth2

/// ID tokens for a service account that another credential impersonates, through the IAM
/// Credentials API's `generateIdToken`: the source credential's own access token authenticates
/// the request, and the answer is an ID token of the target account for the audience asked for
/// (its lifetime read from its own `exp`).
///
/// Hold it in ``GoogleCredentials`` to cache tokens and send them as `Authorization: Bearer` to a
/// private Cloud Run or IAP-fronted service. The source's requirements are
/// ``ImpersonatedTokenSource``'s. No token appears in a log line, a `description` or an error.
public struct ImpersonatedIDTokenSource: GoogleTokenSource {
    /// The credential that impersonates: any token provider whose access tokens the IAM
    /// Credentials API takes (``GoogleCredentials``, an ``/OAuth2/AuthSession`` signed in to Google).
    public let source: any InvalidatableAuthTokenProvider
    /// The service account impersonated.
    public let targetPrincipal: String
    /// The chain between the source and the target (`projects/-/serviceAccounts/EMAIL`).
    public let delegates: [String]
    /// The audience the tokens are for.
    public let audience: String
    /// Whether the tokens carry the account's `email` claim (Cloud Run and IAP want it; on by default).
    public let includeEmail: Bool
    /// The `generateIdToken` URL.
    public let endpoint: URL

    private let transport: any OAuthTransport
    private let logger: Logger

    /// A source of `targetPrincipal`'s ID tokens for `audience`, with `source`'s tokens.
    ///
    /// - Parameters:
    ///   - source: The credential that impersonates.
    ///   - targetPrincipal: The service account's email.
    ///   - delegates: Service accounts between the source and the target (emails or
    ///     `projects/-/serviceAccounts/EMAIL`); none by default.
    ///   - audience: The receiving service's URL (Cloud Run) or OAuth client id (IAP).
    ///   - includeEmail: Whether the token carries `email` and `email_verified`; `true` by default.
    ///   - endpoint: The `…:generateIdToken` URL; by default the IAM Credentials API's for
    ///     `targetPrincipal` in the source's universe (``GoogleCredentials/universeDomain``;
    ///     `googleapis.com` for a source of another type).
    ///   - transport: How requests reach the API.
    ///   - logger: Where requests are logged (never a token).
    /// - Throws: ``/OAuth2/OAuthError/Kind/invalidConfiguration`` for a target, delegate, audience or
    ///   endpoint that cannot be used.
    public init(
        source: any InvalidatableAuthTokenProvider,
        targetPrincipal: String,
        delegates: [String] = [],
        audience: String,
        includeEmail: Bool = true,
        endpoint: URL? = nil,
        transport: any OAuthTransport = HTTP1OAuthTransport.standard,
        logger: Logger = Logger(label: "swift-authrpc.google")
    ) throws(OAuthError) {
        try IDTokenAudience.check(audience)
        self.source = source
        self.targetPrincipal = try ServiceAccountName.email(targetPrincipal, role: "the service account to impersonate")
        self.delegates = try delegates.map { (delegate) throws(OAuthError) in try ServiceAccountName.delegate(delegate)
        }
        self.audience = audience
        self.includeEmail = includeEmail
        self.endpoint = try ServiceAccountName.endpoint(
            endpoint,
            for: self.targetPrincipal,
            method: "generateIdToken",
            universeDomain: ServiceAccountName.universeDomain(of: source)
        )
        self.transport = transport
        self.logger = logger
    }

    /// Gets a source token (from the source's cache when fresh) and asks the API for an ID token.
    ///
    /// - Throws: ``/OAuth2/OAuthError`` as ``ImpersonatedTokenSource/fetchToken()`` does;
    ///   ``/OAuth2/OAuthError/Kind/transient`` also for a token that is not a JWT with an `exp`.
    public func fetchToken() async throws(OAuthError) -> FetchedAccessToken {
        let sourceToken = try await ServiceAccountName.sourceToken(from: source)
        logger.debug(
            "asking IAM Credentials for an ID token",
            metadata: ["target": "\(targetPrincipal)", "audience": "\(audience)"]
        )
        do {
            return try await IAMCredentials.generateIdToken(
                at: endpoint,
                sourceToken: sourceToken,
                delegates: delegates,
                audience: audience,
                includeEmail: includeEmail,
                transport: transport
            )
        } catch {
            if error.oauthErrorCode == "UNAUTHENTICATED" { await source.invalidate(token: sourceToken) }
            throw error
        }
    }

    /// The target account, the chain from the source, and the source's kind and principal.
    public var identity: GoogleCredentialIdentity {
        ServiceAccountName.identity(target: targetPrincipal, delegates: delegates, source: source)
    }

    /// The chain, the audience and the endpoint; never a token.
    public var description: String {
        "ImpersonatedIDTokenSource(\(targetPrincipal) via \(identity.chain.dropLast().joined(separator: " -> ")), audience \(audience), endpoint \(GrantRequest.redacted(endpoint)))"
    }
}
