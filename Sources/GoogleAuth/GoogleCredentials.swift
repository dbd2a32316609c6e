public import AuthRPC
import Foundation
public import Logging
public import OAuth2
import Synchronization

/// A Google credential as a call's token provider, with ``/OAuth2/AuthSession``'s guarantees: a fresh
/// token is read without a task or an actor hop, one token request serves every caller waiting at
/// that moment (200 calls on an expired token make one request), a token stops counting as fresh
/// 60 s before it expires (at most half its lifetime), and after a failed request the next ones
/// wait for ``refreshBackoff``. A server's UNAUTHENTICATED invalidates the token and the call is
/// retried once with a new one.
///
/// ```swift
/// let credentials = try GoogleCredentials.applicationDefault(scopes: ["https://www.googleapis.com/auth/cloud-platform"])
/// var options = CallOptions()
/// options.authTokenProvider = credentials
/// ```
///
/// Or one kind directly: `GoogleCredentials(source: ServiceAccountTokenSource(...))` (the JWT
/// bearer grant), `GoogleCredentials(source: AuthorizedUserTokenSource(...))`,
/// `GoogleCredentials(source: ComputeEngineTokenSource(...))`, or
/// ``init(selfSignedJWTsFor:scopes:lifetime:quotaProjectID:expiryTolerance:refreshBackoff:universeDomain:logger:)`` (no token
/// endpoint: a JWT per service, its audience `https://<host>/` from each call's `:authority`).
///
/// A quota project (an authorized_user file's `quota_project_id`, or `GOOGLE_CLOUD_QUOTA_PROJECT`
/// for Application Default Credentials) goes with every call as `x-goog-user-project`.
///
/// Universes: a credential's tokens are good only in its universe (its file's `universe_domain`,
/// `googleapis.com` by default). The universe of the endpoints the credentials are used with is
/// given when they are made (`universeDomain`, `googleapis.com` by default, as Google's client
/// libraries take it from their client options); credentials of another universe are refused
/// then, with a message naming both, before anything is sent. A call whose `:authority` is a
/// `googleapis.com` host while the expected universe is another fails the same way before any
/// token is asked for. The metadata server's universe is known only by asking it
/// (``ComputeEngineTokenSource/universeDomain()``): with a ``ComputeEngineTokenSource``, the
/// server's answer is checked once, before the first token is asked for, and a call fails the
/// same way when it differs.
/// Failures come as ``/OAuth2/OAuthError``: a call fails UNAUTHENTICATED when the grant was refused and
/// UNAVAILABLE when the token endpoint could not be reached, with the error as its cause. No
/// private key, assertion, JWT or token appears in a log line, a `description` or an error.
public final class GoogleCredentials: InvalidatableAuthTokenProvider, CustomStringConvertible {
    /// Who the tokens act as, where the credential came from, and the quota project billed.
    public let identity: GoogleCredentialIdentity
    /// How long before expiry a token stops counting as fresh (at most half its lifetime).
    public let expiryTolerance: Duration
    /// How long to wait after a failed token request (refused or transient) before asking again.
    public let refreshBackoff: RefreshBackoff
    /// `x-goog-user-project` when there is a quota project; sent with every call.
    public let requestMetadata: Metadata
    /// The universe of the endpoints these credentials are for: the credential's own
    /// (``GoogleCredentialIdentity/universeDomain``), checked when they were made (for the
    /// metadata server, the universe expected, checked against the server's before the first token).
    public var universeDomain: String { identity.universeDomain }

    private let tokens: Tokens
    private let pendingUniverse: PendingUniverseCheck?
    private let logger: Logger

    /// Where tokens come from.
    private enum Tokens: Sendable {
        /// One source (a token endpoint or the metadata server) behind one engine.
        case source(any GoogleTokenSource, TokenEngine)
        /// Self-signed JWTs, one engine per audience.
        case selfSigned(SelfSignedJWTs)
    }

    /// The header that names the quota project.
    public static let quotaProjectHeader = "x-goog-user-project"

    /// Tokens from `source`: a service account's JWT bearer grant (``ServiceAccountTokenSource``),
    /// an authorized user's refresh token (``AuthorizedUserTokenSource``) or the metadata server
    /// (``ComputeEngineTokenSource``).
    ///
    /// - Parameters:
    ///   - source: Where tokens come from; asked once per token, never while one is fresh.
    ///   - quotaProjectID: The project billed for the calls (`x-goog-user-project`); `nil` takes
    ///     the credential's own (an authorized_user file's `quota_project_id`), if any.
    ///   - expiryTolerance: How long before expiry a token is renewed; 60 s by default.
    ///   - refreshBackoff: How long to wait after failed token requests.
    ///   - universeDomain: The universe of the endpoints the calls go to; `googleapis.com` by default.
    ///     A ``ComputeEngineTokenSource``'s is checked against the metadata server's answer
    ///     before the first token.
    ///   - logger: Where failures are logged (never a token or secret).
    /// - Throws: ``/OAuth2/OAuthError/Kind/invalidConfiguration`` for a quota project that cannot go in
    ///   a header, a `universeDomain` that is not a domain name, or a credential of another
    ///   universe than `universeDomain`.
    public convenience init(
        source: any GoogleTokenSource,
        quotaProjectID: String? = nil,
        expiryTolerance: Duration = .seconds(60),
        refreshBackoff: RefreshBackoff = .default,
        universeDomain: String = GoogleCredentialIdentity.defaultUniverseDomain,
        logger: Logger = Logger(label: "swift-authrpc.google")
    ) throws(OAuthError) {
        let expected = try UniverseDomain.validated(universeDomain, from: "the universeDomain argument")
        var identity = source.identity
        var pending: PendingUniverseCheck?
        if let asking = source as? any UniverseDomainDiscovery {
            // Known only by asking the server: checked before the first token, never here (no request leaves an initializer).
            identity.universeDomain = expected
            pending = PendingUniverseCheck(source: asking, expected: expected)
        } else {
            try Self.checkUniverse(of: identity, expected: expected, field: "universe_domain")
        }
        let engine = TokenEngine(
            expiryTolerance: expiryTolerance,
            refreshBackoff: refreshBackoff,
            backoffScope: .everyFailure
        )
        try self.init(
            tokens: .source(source, engine),
            identity: identity,
            pendingUniverse: pending,
            quotaProjectID: quotaProjectID,
            expiryTolerance: expiryTolerance,
            refreshBackoff: refreshBackoff,
            logger: logger
        )
    }

    /// Self-signed JWTs of the service account `key` as access tokens ("JWT access", what gRPC
    /// C++ does with a service-account key and Google's libraries do for gRPC): no token
    /// endpoint, no request leaves the process.
    ///
    /// Without scopes, each call's token has `aud` = `https://<host>/`, the host of the call's
    /// `:authority`; one JWT is minted per audience and reused while fresh. With scopes, one JWT
    /// with a `scope` claim (and no `aud`) serves every call.
    ///
    /// - Parameters:
    ///   - key: The service account's key; it signs every JWT, and nothing else leaves the process.
    ///   - scopes: Scopes for a `scope` claim instead of per-service audiences; none by default.
    ///   - lifetime: How long each JWT lives (1 s...1 h; Google accepts at most an hour, the default).
    ///   - quotaProjectID: The project billed for the calls (`x-goog-user-project`); none by default.
    ///   - expiryTolerance: How long before expiry a new JWT is made; 60 s by default.
    ///   - refreshBackoff: How long to wait after a JWT could not be made before trying again.
    ///   - universeDomain: The universe of the endpoints the calls go to; `googleapis.com` by default.
    ///   - logger: Where failures are logged (never a key or a token).
    /// - Throws: ``/OAuth2/OAuthError/Kind/invalidConfiguration`` for a lifetime outside 1 s...1 h, a
    ///   scope with a space, a quota project that cannot go in a header, or a key of another
    ///   universe than `universeDomain`.
    public convenience init(
        selfSignedJWTsFor key: ServiceAccountKey,
        scopes: [String] = [],
        lifetime: Duration = ServiceAccountJWTAccessSource.maximumLifetime,
        quotaProjectID: String? = nil,
        expiryTolerance: Duration = .seconds(60),
        refreshBackoff: RefreshBackoff = .default,
        universeDomain: String = GoogleCredentialIdentity.defaultUniverseDomain,
        logger: Logger = Logger(label: "swift-authrpc.google")
    ) throws(OAuthError) {
        try Self.checkUniverse(
            of: key.identity,
            expected: UniverseDomain.validated(universeDomain, from: "the universeDomain argument"),
            field: "universe_domain"
        )
        let jwts = try SelfSignedJWTs(
            key: key,
            scopes: scopes,
            lifetime: lifetime,
            expiryTolerance: expiryTolerance,
            refreshBackoff: refreshBackoff
        )
        try self.init(
            tokens: .selfSigned(jwts),
            identity: key.identity,
            pendingUniverse: nil,
            quotaProjectID: quotaProjectID,
            expiryTolerance: expiryTolerance,
            refreshBackoff: refreshBackoff,
            logger: logger
        )
    }

    private init(
        tokens: Tokens,
        identity: GoogleCredentialIdentity,
        pendingUniverse: PendingUniverseCheck?,
        quotaProjectID: String?,
        expiryTolerance: Duration,
        refreshBackoff: RefreshBackoff,
        logger: Logger
    ) throws(OAuthError) {
        var identity = identity
        if let quotaProjectID {
            guard QuotaProject.isValid(quotaProjectID) else {
                throw OAuthError(
                    .invalidConfiguration,
                    "the quota project \"\(quotaProjectID.prefix(64))\" is not a project id (printable ASCII, no spaces, at most 128 characters)"
                )
            }
            identity.quotaProjectID = quotaProjectID
        }
        self.tokens = tokens
        self.pendingUniverse = pendingUniverse
        self.identity = identity
        self.expiryTolerance = expiryTolerance
        self.refreshBackoff = refreshBackoff
        self.logger = logger
        var metadata = Metadata()
        if let quota = identity.quotaProjectID { metadata.addString(quota, forKey: Self.quotaProjectHeader) }
        requestMetadata = metadata
    }

    // MARK: - Tokens

    /// A fresh access token for a call to `authority` (`host[:port]`), from the cache or a new
    /// request. Only self-signed JWTs depend on the authority; the others ignore it.
    ///
    /// - Throws: ``/OAuth2/OAuthError``: an authorization error when the grant was refused,
    ///   ``/OAuth2/OAuthError/Kind/transient`` when the token endpoint or metadata server could not be
    ///   reached (during the backoff that follows, the same error at once),
    ///   ``/OAuth2/OAuthError/Kind/invalidConfiguration`` for self-signed JWTs without an authority or scopes.
    public func freshAccessToken(forAuthority authority: String? = nil) async throws(OAuthError) -> String {
        if let problem = universeProblem(forAuthority: authority) { throw problem }
        switch tokens {
        case .source(let source, let engine):
            return try await engine.token { generation in
                do throws(OAuthError) {
                    try await self.pendingUniverse?.confirm(identity: self.identity)
                    let fetched = try await source.fetchToken()
                    engine.accept(fetched, generation: generation)
                    return .token(fetched.accessToken)
                } catch {
                    self.logger.debug(
                        "getting a token failed",
                        metadata: ["credentials": "\(self.identity)", "error": "\(error)"]
                    )
                    return .failure(error)
                }
            }
        case .selfSigned(let jwts):
            return try await jwts.token(forAuthority: authority)
        }
    }

    /// A fresh token for a call, whatever its authority: ``freshAccessToken(forAuthority:)``.
    public func token() async throws -> String {
        try await freshAccessToken()
    }

    /// A fresh token for the call `context` describes (self-signed JWTs take their audience from
    /// its `:authority`).
    public func token(for context: AuthTokenContext) async throws -> String {
        try await freshAccessToken(forAuthority: context.authority)
    }

    /// The current token when it is fresh, without waiting.
    public func cachedToken() -> String? {
        switch tokens {
        case .source(_, let engine): return engine.cachedToken()
        case .selfSigned(let jwts): return jwts.cachedToken(forAuthority: nil)
        }
    }

    /// The current token for the call `context` describes when it is fresh, without waiting.
    public func cachedToken(for context: AuthTokenContext) -> String? {
        // A call to another universe gets no token here: token(for:) says why.
        guard universeProblem(forAuthority: context.authority) == nil else { return nil }
        switch tokens {
        case .source(_, let engine): return engine.cachedToken()
        case .selfSigned(let jwts): return jwts.cachedToken(forAuthority: context.authority)
        }
    }

    /// Stops handing out `token` (a server rejected it): the next call gets a new one. When
    /// another caller already got past it, nothing changes.
    public func invalidate(token: String) async {
        switch tokens {
        case .source(_, let engine): engine.invalidate(token: token)
        case .selfSigned(let jwts): jwts.invalidate(token: token)
        }
    }

    // MARK: - Universe

    /// Throws unless `identity`'s universe is `expected` (compared without case); `field` says
    /// where the credential's universe was read.
    static func checkUniverse(
        of identity: GoogleCredentialIdentity,
        expected: String,
        field: String
    ) throws(OAuthError) {
        guard identity.universeDomain.lowercased() != expected.lowercased() else { return }
        let credential = identity.source.map { "the credential from \($0)" } ?? "the credential"
        throw OAuthError(
            .invalidConfiguration,
            "\(credential) is for universe \(identity.universeDomain) (\(field)), but the endpoints are in universe \(expected): its tokens would be refused there"
        )
    }

    /// Why a call to `authority` must not get a token: its host is in Google's public universe
    /// (`googleapis.com` or a name under it) while these credentials are for another.
    private func universeProblem(forAuthority authority: String?) -> OAuthError? {
        let universe = identity.universeDomain.lowercased()
        let publicUniverse = GoogleCredentialIdentity.defaultUniverseDomain
        guard universe != publicUniverse, let authority,
            var host = ServiceHost.host(ofAuthority: authority)?.lowercased()
        else { return nil }
        if host.hasSuffix(".") { host.removeLast() }
        guard host == publicUniverse || host.hasSuffix("." + publicUniverse) else { return nil }
        return OAuthError(
            .invalidConfiguration,
            "the call goes to \(host), in universe \(publicUniverse), but the credentials are for universe \(identity.universeDomain); no token is sent there"
        )
    }

    // MARK: - Description

    /// The identity and how tokens are obtained; never a key, a secret or a token.
    public var description: String {
        let how: String
        switch tokens {
        case .source(let source, _): how = source.description
        case .selfSigned(let jwts): how = jwts.description
        }
        return "GoogleCredentials(\(identity); \(how))"
    }
}

/// What a quota project id may be: it goes into the `x-goog-user-project` header.
enum QuotaProject {
    static func isValid(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 128 && id.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }
}
