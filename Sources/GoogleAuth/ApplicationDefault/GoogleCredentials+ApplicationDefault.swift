public import Foundation
public import Logging
public import OAuth2

extension GoogleCredentials {
    /// The Application Default Credentials of this environment as a call's token provider, found
    /// in Google's order (``ApplicationDefaultCredentials/resolve(in:)``: `GOOGLE_APPLICATION_CREDENTIALS`,
    /// gcloud's well-known file, then the metadata server only when `GCE_METADATA_HOST` is set or
    /// the machine is a Google VM; nothing is sent anywhere to decide), made into a provider by
    /// ``init(_:scopes:userTokenEndpoint:transport:expiryTolerance:refreshBackoff:universeDomain:logger:)``.
    ///
    /// - Parameters:
    ///   - scopes: The scopes to ask for.
    ///   - environment: Where to look; this process's environment by default.
    ///   - userTokenEndpoint: Where a user's refresh goes: Google's, whatever the file says.
    ///   - transport: How token requests are sent.
    ///   - expiryTolerance: How long before expiry a token is renewed; 60 s by default.
    ///   - refreshBackoff: How long to wait after failed token requests.
    ///   - universeDomain: The universe of the endpoints the calls go to; `nil` (the default)
    ///     takes `GOOGLE_CLOUD_UNIVERSE_DOMAIN` from `environment`, else `googleapis.com`. A
    ///     credential of another universe is refused, naming both.
    ///   - logger: Where failures are logged (never a token or secret).
    /// - Throws: ``/OAuth2/OAuthError/Kind/invalidConfiguration`` when nothing is found (the message lists
    ///   each place tried and why it did not apply; `underlying` is an
    ///   ``ApplicationDefaultCredentials/SearchReport``), or when what was found is unusable.
    public static func applicationDefault(
        scopes: [String],
        environment: ApplicationDefaultCredentials.Environment = .current,
        userTokenEndpoint: URL = AuthorizedUserTokenSource.googleTokenEndpoint,
        transport: any OAuthTransport = HTTP1OAuthTransport.standard,
        expiryTolerance: Duration = .seconds(60),
        refreshBackoff: RefreshBackoff = .default,
        universeDomain: String? = nil,
        logger: Logger = Logger(label: "swift-authrpc.google")
    ) throws(OAuthError) -> GoogleCredentials {
        try GoogleCredentials(
            ApplicationDefaultCredentials.resolve(in: environment),
            scopes: scopes,
            userTokenEndpoint: userTokenEndpoint,
            transport: transport,
            expiryTolerance: expiryTolerance,
            refreshBackoff: refreshBackoff,
            universeDomain: universeDomain,
            logger: logger
        )
    }

    /// A provider for what ``ApplicationDefaultCredentials/resolve(in:)`` found:
    ///
    /// - a service account's key: with scopes, the JWT bearer grant at its `token_uri` (as
    ///   google-auth does); without scopes, self-signed JWTs for each call's service (as gRPC
    ///   C++'s default credentials do);
    /// - an authorized_user file: its refresh token at `userTokenEndpoint` (the scopes are the
    ///   ones it was granted);
    /// - the metadata server: the instance's default service account, with `scopes` if given.
    ///
    /// The resolved quota project (`GOOGLE_CLOUD_QUOTA_PROJECT`, else an authorized_user file's)
    /// is sent as `x-goog-user-project`.
    ///
    /// The endpoints' universe is `universeDomain` when given, else the resolved
    /// `GOOGLE_CLOUD_UNIVERSE_DOMAIN` (``ApplicationDefaultCredentials/Resolved/universeDomain``),
    /// else `googleapis.com`, as Google's client libraries choose it. A credential of another
    /// universe is refused, naming both. A service account's key of a universe other than
    /// `googleapis.com` always signs its own JWTs (with `scopes` as their `scope` claim when
    /// given): such a universe has no OAuth token endpoint for the JWT bearer grant, and
    /// google-auth does the same.
    ///
    /// - Throws: ``/OAuth2/OAuthError/Kind/invalidConfiguration`` for scopes or an endpoint the
    ///   credential's source refuses, or a credential of another universe.
    public convenience init(
        _ resolved: ApplicationDefaultCredentials.Resolved,
        scopes: [String],
        userTokenEndpoint: URL = AuthorizedUserTokenSource.googleTokenEndpoint,
        transport: any OAuthTransport = HTTP1OAuthTransport.standard,
        expiryTolerance: Duration = .seconds(60),
        refreshBackoff: RefreshBackoff = .default,
        universeDomain: String? = nil,
        logger: Logger = Logger(label: "swift-authrpc.google")
    ) throws(OAuthError) {
        let universe =
            try universeDomain.map { (value) throws(OAuthError) in
                try UniverseDomain.validated(value, from: "the universeDomain argument")
            } ?? resolved.universeDomain ?? GoogleCredentialIdentity.defaultUniverseDomain
        if let key = resolved.credential.serviceAccountKey,
            scopes.isEmpty || key.universeDomain != GoogleCredentialIdentity.defaultUniverseDomain
        {
            try self.init(
                selfSignedJWTsFor: key,
                scopes: scopes,
                quotaProjectID: resolved.quotaProjectID,
                expiryTolerance: expiryTolerance,
                refreshBackoff: refreshBackoff,
                universeDomain: universe,
                logger: logger
            )
        } else {
            let source = try resolved.tokenSource(
                scopes: scopes,
                userTokenEndpoint: userTokenEndpoint,
                transport: transport,
                logger: logger
            )
            try self.init(
                source: source,
                quotaProjectID: resolved.quotaProjectID,
                expiryTolerance: expiryTolerance,
                refreshBackoff: refreshBackoff,
                universeDomain: universe,
                logger: logger
            )
        }
    }
}
