public import Foundation
public import Logging
public import OAuth2

/// A user's credentials as gcloud saves them for Application Default Credentials
/// (`gcloud auth application-default login`, `"type": "authorized_user"`): an OAuth client and a
/// refresh token.
///
/// The client secret and the refresh token never appear in a `description` or an error. The file
/// is read into memory that is cleared when released, but the two secrets are kept as Swift
/// strings for as long as these credentials exist (every refresh sends them), and Swift strings
/// cannot be cleared: their memory is released, not overwritten. A
/// `token_uri` in the file is ignored, as Google's libraries ignore it: a file cannot send the
/// refresh token elsewhere; the token endpoint is the caller's choice
/// (``AuthorizedUserTokenSource``).
public struct AuthorizedUserCredentials: Sendable, CustomStringConvertible {
    /// The OAuth client id (`client_id`).
    public let clientID: String
    /// The project billed for quota (`quota_project_id`), when the file names one: send it as
    /// `x-goog-user-project` on calls.
    public let quotaProjectID: String?
    /// The account gcloud signed in (`account`), when the file says.
    public let account: String?
    /// The universe the user's tokens are for (`universe_domain`), `googleapis.com` when absent.
    public let universeDomain: String
    /// Where the credentials were read from (a path), for ``identity``.
    public let source: String?

    let clientSecret: String
    let refreshToken: String

    /// Reads credentials from the JSON of an authorized_user file.
    ///
    /// - Throws: ``/OAuth2/OAuthError/Kind/invalidConfiguration`` naming the field that is missing or
    ///   wrong, never its value.
    public init(json data: Data, source: String? = nil) throws(OAuthError) {
        try self.init(CredentialFile(json: data, source: source ?? "the authorized_user credentials"), source: source)
    }

    /// Reads the authorized_user file at `path`.
    public init(contentsOfFile path: String) throws(OAuthError) {
        try self.init(CredentialFile(contentsOfFile: path), source: path)
    }

    init(_ file: CredentialFile, source: String?) throws(OAuthError) {
        let type = try file.type()
        guard type == "authorized_user" else {
            throw OAuthError(
                .invalidConfiguration,
                "\(file.source) has type \(CredentialFile.shown(type: type)), not authorized_user"
            )
        }
        clientID = try file.token("client_id", maximumLength: 512)!
        clientSecret = try file.token("client_secret", maximumLength: 512)!
        refreshToken = try file.token("refresh_token", maximumLength: 4096)!
        quotaProjectID = try file.token("quota_project_id", maximumLength: 128, required: false)
        account = try file.optionalString("account")
        universeDomain =
            try file.token("universe_domain", maximumLength: UniverseDomain.maximumLength, required: false).map {
                (domain) throws(OAuthError) in
                try UniverseDomain.validated(domain, from: "universe_domain in \(file.source)")
            } ?? GoogleCredentialIdentity.defaultUniverseDomain
        self.source = source
    }

    /// The client (the user is not named in the file), the file and the quota project.
    public var identity: GoogleCredentialIdentity {
        GoogleCredentialIdentity(
            kind: .authorizedUser,
            principal: clientID,
            source: source,
            quotaProjectID: quotaProjectID,
            universeDomain: universeDomain
        )
    }

    /// The client id and quota project; never the secret or the refresh token.
    public var description: String {
        var text = "AuthorizedUserCredentials(client: \(clientID)"
        if let quotaProjectID { text += ", quota project: \(quotaProjectID)" }
        return text + ", clientSecret: <redacted>, refreshToken: <redacted>)"
    }
}

/// Access tokens for an authorized user: the refresh-token grant at Google's token endpoint (or
/// another), the client authenticated with its secret in the form as Google's libraries do.
///
/// Google does not rotate these refresh tokens; if a server answers with a new one, it is not
/// kept (the credentials file is gcloud's, not ours to rewrite).
public struct AuthorizedUserTokenSource: GoogleTokenSource {
    /// Google's token endpoint.
    public static let googleTokenEndpoint = ServiceConfiguration.google.tokenEndpoint

    /// The credentials.
    public let credentials: AuthorizedUserCredentials
    /// Where the refresh goes.
    public let tokenEndpoint: URL

    private let transport: any OAuthTransport
    private let logger: Logger

    /// A source for `credentials`, refreshing at `tokenEndpoint`.
    ///
    /// - Throws: ``/OAuth2/OAuthError/Kind/invalidConfiguration`` when `tokenEndpoint` is neither HTTPS
    ///   nor HTTP to a loopback address.
    public init(
        credentials: AuthorizedUserCredentials,
        tokenEndpoint: URL = googleTokenEndpoint,
        transport: any OAuthTransport = HTTP1OAuthTransport.standard,
        logger: Logger = Logger(label: "swift-authrpc.google")
    ) throws(OAuthError) {
        let scheme = tokenEndpoint.scheme?.lowercased()
        guard scheme == "https" || (scheme == "http" && tokenEndpoint.host.map(LoopbackHost.contains) == true) else {
            throw OAuthError(
                .invalidConfiguration,
                "the token endpoint \(GrantRequest.redacted(tokenEndpoint)) must be https (http only to a loopback address)"
            )
        }
        self.credentials = credentials
        self.tokenEndpoint = tokenEndpoint
        self.transport = transport
        self.logger = logger
    }

    /// Refreshes: `grant_type=refresh_token` with the client's id and secret.
    ///
    /// - Throws: ``/OAuth2/OAuthError``: an authorization error when the refresh token was revoked or
    ///   expired (`invalid_grant`: run `gcloud auth application-default login` again),
    ///   ``/OAuth2/OAuthError/Kind/transient`` when the endpoint cannot be reached.
    public func fetchToken() async throws(OAuthError) -> FetchedAccessToken {
        logger.debug(
            "refreshing an authorized user's token",
            metadata: [
                "client": "\(credentials.clientID)", "endpoint": "\(GrantRequest.redacted(tokenEndpoint))",
            ]
        )
        let client = OAuthClient(
            id: credentials.clientID,
            secret: credentials.clientSecret,
            authentication: .clientSecretPost
        )
        return try await GrantRequest.requestToken(
            at: tokenEndpoint,
            parameters: [("grant_type", "refresh_token"), ("refresh_token", credentials.refreshToken)],
            client: client,
            secrets: [credentials.refreshToken, credentials.clientSecret],
            transport: transport
        )
    }

    /// The client and the quota project.
    public var identity: GoogleCredentialIdentity { credentials.identity }

    /// The client and the endpoint; never a secret.
    public var description: String {
        "AuthorizedUserTokenSource(client: \(credentials.clientID), token endpoint \(GrantRequest.redacted(tokenEndpoint)))"
    }
}
