public import AuthRPC
public import Foundation
public import Logging
public import OAuth2

/// Access tokens for a service account that another credential impersonates, through the IAM
/// Credentials API's `generateAccessToken`: the source credential's own access token
/// authenticates the request, and the answer is a token for the target account with the scopes
/// and lifetime asked for.
///
/// The source is any ``GoogleCredentials`` (a user's, a service account's key, the metadata
/// server's, another impersonation), whose token engine keeps its own token fresh; the source
/// needs the `cloud-platform` (or `iam`) scope and the Token Creator role on the target (or on
/// the first delegate, each delegate having it on the next). Hold this source in
/// ``GoogleCredentials`` so the impersonated tokens are cached and shared as every token is:
///
/// ```swift
/// let user = try GoogleCredentials.applicationDefault(scopes: [])
/// let deployer = try GoogleCredentials(source: ImpersonatedTokenSource(
///     source: user,
///     targetPrincipal: "deployer@my-project.iam.gserviceaccount.com",
///     scopes: ["https://www.googleapis.com/auth/cloud-platform"]))
/// ```
///
/// When the API answers 401 (the source's token was revoked or expired early), the source's
/// token is invalidated so the next fetch asks for a new one. No token appears in a log line,
/// a `description` or an error.
public struct ImpersonatedTokenSource: GoogleTokenSource {
    /// The longest lifetime the API grants (12 h, only where the organization allows more than
    /// an hour).
    public static let maximumLifetime: Duration = IAMCredentials.maximumLifetime

    /// The credential that impersonates: any token provider whose access tokens the IAM
    /// Credentials API takes (``GoogleCredentials``, an ``/OAuth2/AuthSession`` signed in to Google).
    public let source: any InvalidatableAuthTokenProvider
    /// The service account impersonated.
    public let targetPrincipal: String
    /// The chain between the source and the target, as the API takes it
    /// (`projects/-/serviceAccounts/EMAIL`).
    public let delegates: [String]
    /// The scopes asked for.
    public let scopes: [String]
    /// How long each token lives (an hour by default).
    public let lifetime: Duration
    /// The `generateAccessToken` URL.
    public let endpoint: URL

    private let transport: any OAuthTransport
    private let logger: Logger

    /// A source impersonating `targetPrincipal` with `source`'s tokens.
    ///
    /// - Parameters:
    ///   - source: The credential that impersonates; its tokens authenticate each request.
    ///   - targetPrincipal: The service account's email.
    ///   - delegates: Service accounts between the source and the target, each an email or
    ///     `projects/-/serviceAccounts/EMAIL` (sent in that form); none by default.
    ///   - scopes: The scopes of the impersonated tokens; at least one.
    ///   - lifetime: How long each token lives: whole seconds, 1 s to 12 h (more than an hour only
    ///     where the organization allows it); an hour by default.
    ///   - endpoint: The `…:generateAccessToken` URL; by default
    ///     `https://iamcredentials.UNIVERSE/v1/projects/-/serviceAccounts/TARGET:generateAccessToken`,
    ///     UNIVERSE being the source's ``GoogleCredentials/universeDomain`` (`googleapis.com` for a
    ///     source of another type).
    ///   - transport: How requests reach the API.
    ///   - logger: Where requests are logged (never a token).
    /// - Throws: ``/OAuth2/OAuthError/Kind/invalidConfiguration`` for a target or delegate that is
    ///   not an email, no scopes, a scope with a space, a lifetime out of range, or an endpoint
    ///   that is not https (http only to loopback).
    public init(
        source: any InvalidatableAuthTokenProvider,
        targetPrincipal: String,
        delegates: [String] = [],
        scopes: [String],
        lifetime: Duration = .seconds(3600),
        endpoint: URL? = nil,
        transport: any OAuthTransport = HTTP1OAuthTransport.standard,
        logger: Logger = Logger(label: "swift-authrpc.google")
    ) throws(OAuthError) {
        guard !scopes.isEmpty else {
            throw OAuthError(
                .invalidConfiguration,
                "impersonating \(targetPrincipal.prefix(256)) needs at least one scope"
            )
        }
        for scope in scopes where scope.isEmpty || scope.contains(where: { $0 == " " || $0.isNewline }) {
            throw OAuthError(.invalidConfiguration, "scope \"\(scope.prefix(80))\" is empty or contains a space")
        }
        let seconds = lifetime.components.seconds
        guard lifetime >= .seconds(1), lifetime <= Self.maximumLifetime, lifetime == .seconds(seconds) else {
            throw OAuthError(
                .invalidConfiguration,
                "an impersonated token's lifetime must be whole seconds from 1 s to 12 h, not \(lifetime)"
            )
        }
        self.source = source
        self.targetPrincipal = try ServiceAccountName.email(targetPrincipal, role: "the service account to impersonate")
        self.delegates = try delegates.map { (delegate) throws(OAuthError) in try ServiceAccountName.delegate(delegate)
        }
        self.scopes = scopes
        self.lifetime = lifetime
        self.endpoint = try ServiceAccountName.endpoint(
            endpoint,
            for: self.targetPrincipal,
            method: "generateAccessToken",
            universeDomain: ServiceAccountName.universeDomain(of: source)
        )
        self.transport = transport
        self.logger = logger
    }

    /// Gets a source token (from the source's cache when fresh) and asks the API for a token of
    /// the target account.
    ///
    /// - Throws: ``/OAuth2/OAuthError``: the source's own errors; ``/OAuth2/OAuthError/Kind/authorization``
    ///   when the API refuses (401, 403: a missing Token Creator role on a link of the chain),
    ///   ``/OAuth2/OAuthError/Kind/invalidConfiguration`` for 400 and 404 (an unknown account),
    ///   ``/OAuth2/OAuthError/Kind/transient`` when it cannot be reached.
    public func fetchToken() async throws(OAuthError) -> FetchedAccessToken {
        let sourceToken = try await ServiceAccountName.sourceToken(from: source)
        logger.debug(
            "asking IAM Credentials for an impersonated token",
            metadata: ["target": "\(targetPrincipal)", "endpoint": "\(GrantRequest.redacted(endpoint))"]
        )
        do {
            return try await IAMCredentials.generateAccessToken(
                at: endpoint,
                sourceToken: sourceToken,
                delegates: delegates,
                scopes: scopes,
                lifetime: lifetime,
                transport: transport
            )
        } catch {
            if error.oauthErrorCode == "UNAUTHENTICATED" { await source.invalidate(token: sourceToken) }
            throw error
        }
    }

    /// The target account, the chain from the source, and the source's description.
    public var identity: GoogleCredentialIdentity {
        ServiceAccountName.identity(target: targetPrincipal, delegates: delegates, source: source)
    }

    /// The chain, the scopes and the endpoint; never a token.
    public var description: String {
        "ImpersonatedTokenSource(\(targetPrincipal) via \(identity.chain.dropLast().joined(separator: " -> ")), scopes: \(scopes.joined(separator: " ")), lifetime \(lifetime.components.seconds) s, endpoint \(GrantRequest.redacted(endpoint)))"
    }
}

/// Service-account names as the IAM Credentials API takes them.
enum ServiceAccountName {
    static let delegatePrefix = "projects/-/serviceAccounts/"

    /// `email` when it reads as an email: printable, no spaces, `/`, or `:`, one `@`.
    static func email(_ email: String, role: String) throws(OAuthError) -> String {
        guard (3...256).contains(email.utf8.count), email.utf8.filter({ $0 == UInt8(ascii: "@") }).count == 1,
            email.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: ":") })
        else {
            throw OAuthError(
                .invalidConfiguration,
                "\(role) must be a service account's email, not \"\(Printable.quoted(String(email.prefix(100))))\""
            )
        }
        return email
    }

    /// A delegate as the API takes it: `projects/-/serviceAccounts/EMAIL` (an email alone gets the prefix).
    static func delegate(_ delegate: String) throws(OAuthError) -> String {
        let email = delegate.hasPrefix(delegatePrefix) ? String(delegate.dropFirst(delegatePrefix.count)) : delegate
        return delegatePrefix + (try Self.email(email, role: "a delegate"))
    }

    /// The email in a delegate.
    static func email(ofDelegate delegate: String) -> String {
        delegate.hasPrefix(delegatePrefix) ? String(delegate.dropFirst(delegatePrefix.count)) : delegate
    }

    /// The universe of the impersonating credential: a ``GoogleCredentials``' own, else Google's
    /// public universe.
    static func universeDomain(of source: any InvalidatableAuthTokenProvider) -> String {
        (source as? GoogleCredentials)?.universeDomain ?? GoogleCredentialIdentity.defaultUniverseDomain
    }

    /// `endpoint` checked (https, or http to loopback), or the IAM Credentials URL for `method` of
    /// `email` in `universeDomain`.
    static func endpoint(
        _ endpoint: URL?,
        for email: String,
        method: String,
        universeDomain: String
    ) throws(OAuthError) -> URL {
        guard let url = endpoint ?? IAMCredentials.url(for: email, method: method, universeDomain: universeDomain)
        else {
            throw OAuthError(.invalidConfiguration, "cannot make the IAM Credentials URL for \(email)")
        }
        guard EndpointSecurity.allows(url), url.user == nil, url.password == nil else {
            throw OAuthError(
                .invalidConfiguration,
                "the IAM Credentials endpoint \(GrantRequest.redacted(url)) must be https (http only to a loopback address)"
            )
        }
        return url
    }

    static func identity(
        target: String,
        delegates: [String],
        source: any InvalidatableAuthTokenProvider
    ) -> GoogleCredentialIdentity {
        let sourceIdentity = (source as? GoogleCredentials)?.identity
        let principal = sourceIdentity?.principal ?? "\(type(of: source))"
        var identity = GoogleCredentialIdentity(
            kind: .impersonatedServiceAccount,
            principal: target,
            source: sourceIdentity.map { "\($0.kind.rawValue) \($0.principal)" } ?? "\(type(of: source))",
            quotaProjectID: sourceIdentity?.quotaProjectID
        )
        identity.chain = [principal] + delegates.map(email(ofDelegate:)) + [target]
        if let universe = sourceIdentity?.universeDomain { identity.universeDomain = universe }
        return identity
    }

    /// A token from the impersonating credential: its own errors as they are when they are
    /// ``/OAuth2/OAuthError``s, others classified by ``/AuthRPC/AuthTokenProviderError/isTransient``.
    static func sourceToken(from source: any InvalidatableAuthTokenProvider) async throws(OAuthError) -> String {
        do {
            return try await source.token()
        } catch let error as OAuthError {
            throw error
        } catch {
            let transient = (error as? any AuthTokenProviderError)?.isTransient ?? false
            throw OAuthError(
                transient ? .transient : .invalidConfiguration,
                "the impersonating credential gave no token: \(Printable.quoted(String(describing: error).prefix(200).description))",
                underlying: SourceFailure(description: String(describing: error))
            )
        }
    }

    /// A source credential's failure, as text.
    struct SourceFailure: Error, Sendable, CustomStringConvertible {
        let description: String
    }
}
