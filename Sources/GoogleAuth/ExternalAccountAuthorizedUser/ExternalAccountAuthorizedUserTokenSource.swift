public import Logging
public import OAuth2

/// Access tokens for a workforce pool user (``ExternalAccountAuthorizedUserCredentials``): the
/// refresh-token grant at the file's `token_url`, the client authenticated with HTTP Basic as
/// Google's Security Token Service requires.
///
/// A new refresh token in the answer is not kept: the file is gcloud's, not this package's to
/// rewrite (gcloud's own refresh tokens are not rotated).
public struct ExternalAccountAuthorizedUserTokenSource: GoogleTokenSource {
    /// The credentials.
    public let credentials: ExternalAccountAuthorizedUserCredentials

    private let transport: any OAuthTransport
    private let logger: Logger

    /// A source for `credentials`.
    ///
    /// - Parameters:
    ///   - credentials: The external_account_authorized_user file's credentials.
    ///   - transport: How the refresh is sent.
    ///   - logger: Where refreshes are logged (never a token or secret).
    public init(
        credentials: ExternalAccountAuthorizedUserCredentials,
        transport: any OAuthTransport = HTTP1OAuthTransport.standard,
        logger: Logger = Logger(label: "swift-authrpc.google")
    ) {
        self.credentials = credentials
        self.transport = transport
        self.logger = logger
    }

    /// Refreshes: `grant_type=refresh_token` at `token_url`.
    ///
    /// - Throws: ``/OAuth2/OAuthError``, its message naming the file and the endpoint: an
    ///   authorization error when the refresh token was revoked or expired (`invalid_grant`: sign
    ///   in again with `gcloud auth application-default login --login-config=...`),
    ///   ``/OAuth2/OAuthError/Kind/transient`` when the endpoint cannot be reached.
    public func fetchToken() async throws(OAuthError) -> FetchedAccessToken {
        let endpoint = GrantRequest.redacted(credentials.tokenURL)
        logger.debug(
            "refreshing a workforce pool user's token",
            metadata: ["client": "\(credentials.clientID)", "endpoint": "\(endpoint)"]
        )
        let client = OAuthClient(
            id: credentials.clientID,
            secret: credentials.clientSecret,
            authentication: .clientSecretBasic
        )
        do throws(OAuthError) {
            return try await GrantRequest.requestToken(
                at: credentials.tokenURL,
                parameters: [("grant_type", "refresh_token"), ("refresh_token", credentials.refreshToken)],
                client: client,
                secrets: [credentials.refreshToken, credentials.clientSecret],
                transport: transport
            )
        } catch {
            var error = error
            let file = credentials.source ?? "external_account_authorized_user credentials"
            error.message = "\(file): refreshing the workforce pool user's token at \(endpoint): \(error.message)"
            throw error
        }
    }

    /// The workforce pool provider and the quota project.
    public var identity: GoogleCredentialIdentity { credentials.identity }

    /// The audience, the client and the endpoint; never a secret.
    public var description: String {
        "ExternalAccountAuthorizedUserTokenSource(audience: \(credentials.audience), client: \(credentials.clientID), token_url \(GrantRequest.redacted(credentials.tokenURL)))"
    }
}
