import Foundation
import Logging
import OAuth2

extension GoogleCredentials {
    /// The Application Default Credentials of this environment as a call's token provider, found
    /// in Google's order (``ApplicationDefaultCredentials/resolve(in:)``: `GOOGLE_APPLICATION_CREDENTIALS`,
    /// gcloud's well-known file, then the metadata server only when `GCE_METADATA_HOST` is set or
    /// the machine is a Google VM; nothing is sent anywhere to decide).
    ///
    /// - A service account's key: with scopes, the JWT bearer grant at its `token_uri` (as
    ///   google-auth does); without scopes, self-signed JWTs for each call's service (as gRPC C++'s
    ///   default credentials do).
    /// - An authorized_user file: its refresh token at `userTokenEndpoint` (scopes are the ones it
    ///   was granted).
    /// - The metadata server: the instance's default service account, with `scopes` if given.
    ///
    /// The quota project (`GOOGLE_CLOUD_QUOTA_PROJECT`, else an authorized_user file's) is sent
    /// as `x-goog-user-project`.
    ///
    /// - Parameters:
    ///   - scopes: The scopes to ask for.
    ///   - environment: Where to look; this process's environment by default.
    ///   - userTokenEndpoint: Where a user's refresh goes: Google's, whatever the file says.
    ///   - transport: How token requests are sent.
    /// - Throws: ``OAuthError/Kind/invalidConfiguration`` when nothing is found (the message lists
    ///   each place tried and why it did not apply; `underlying` is an
    ///   ``ApplicationDefaultCredentials/SearchReport``), or when what was found is unusable.
    public static func applicationDefault(
        scopes: [String],
        environment: ApplicationDefaultCredentials.Environment = .current,
        userTokenEndpoint: URL = AuthorizedUserTokenSource.googleTokenEndpoint,
        transport: any OAuthTransport = URLSessionOAuthTransport(),
        expiryTolerance: Duration = .seconds(60),
        refreshBackoff: RefreshBackoff = .default,
        logger: Logger = Logger(label: "swift-authrpc.google")
    ) throws(OAuthError) -> GoogleCredentials {
        let resolved = try ApplicationDefaultCredentials.resolve(in: environment)
        if case .serviceAccount(let key) = resolved.credential, scopes.isEmpty {
            return try GoogleCredentials(selfSignedJWTsFor: key, quotaProjectID: resolved.quotaProjectID,
                                         expiryTolerance: expiryTolerance, refreshBackoff: refreshBackoff, logger: logger)
        }
        let source = try resolved.tokenSource(scopes: scopes, userTokenEndpoint: userTokenEndpoint, transport: transport, logger: logger)
        return try GoogleCredentials(source: source, quotaProjectID: resolved.quotaProjectID,
                                     expiryTolerance: expiryTolerance, refreshBackoff: refreshBackoff, logger: logger)
    }
}
