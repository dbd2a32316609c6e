public import Foundation
public import Logging
public import OAuth2

/// Access tokens for workload or workforce identity federation (``ExternalAccountCredentials``):
/// each token is the outcome of three steps, every one of which a failure names.
///
/// 1. **The subject token** is read from the file's source: a file, a URL, an executable (only
///    with `GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1`), or a signed AWS request.
/// 2. **The Security Token Service** exchanges it (RFC 8693) for a Google access token:
///    `grant_type=urn:ietf:params:oauth:grant-type:token-exchange` with the file's `audience`,
///    the scopes (``iamScope`` when the token is only used to impersonate), `subject_token_type`, `requested_token_type=...:access_token`, the client's
///    HTTP Basic authentication when the file names one, and a workforce pool's
///    `workforce_pool_user_project` as `options`.
/// 3. **Impersonation**, when the file names a `service_account_impersonation_url`: that token
///    asks the IAM Credentials API for the service account's token (`generateAccessToken` with
///    the scopes and the file's `token_lifetime_seconds`), which is the one handed out.
///
/// Wrapped in ``GoogleCredentials``, one engine keeps the token, one request is in flight for
/// every caller, and the expiry and backoff rules are those of every Google credential. Errors
/// say which file, which source and which step failed, with the endpoint's OAuth error text
/// quoted printable; no subject token, access token or secret is ever in an error, a log line
/// or a `description`.
public struct ExternalAccountTokenSource: GoogleTokenSource {
    /// The scope asked for when none is given: Google's libraries ask for it too.
    public static let cloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"

    /// The scope of the Security Token Service's token when it is only used to impersonate a
    /// service account: enough to call the IAM Credentials API.
    public static let iamScope = "https://www.googleapis.com/auth/iam"

    /// The credentials.
    public let credentials: ExternalAccountCredentials
    /// The scopes asked for.
    public let scopes: [String]

    private let subjectToken: SubjectToken
    private let transport: any OAuthTransport
    private let logger: Logger

    /// How the subject token is read.
    private enum SubjectToken: Sendable {
        case file(path: String, format: ExternalAccountCredentialSource.Format)
        case url(URL, headers: [(name: String, value: String)], format: ExternalAccountCredentialSource.Format)
        case executable(ExecutableSubjectToken)
        case aws(AWSSubjectToken)
    }

    /// A source for `credentials`.
    ///
    /// - Parameters:
    ///   - credentials: The external_account file's credentials.
    ///   - scopes: The scopes to ask for; ``cloudPlatformScope`` when empty.
    ///   - environment: The environment the sources read: `GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES`
    ///     and the executable's own environment, AWS's `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
    ///     `AWS_SESSION_TOKEN`, `AWS_REGION` and `AWS_DEFAULT_REGION`. This process's by default.
    ///   - transport: How the source's, the Security Token Service's and the IAM requests are sent.
    ///   - logger: Where the steps are logged (never a token or secret).
    /// - Throws: ``/OAuth2/OAuthError/Kind/invalidConfiguration`` for a scope that is empty or has a
    ///   space or quote.
    public init(
        credentials: ExternalAccountCredentials,
        scopes: [String] = [],
        environment: [String: String] = ProcessInfo.processInfo.environment,
        transport: any OAuthTransport = HTTP1OAuthTransport.standard,
        logger: Logger = Logger(label: "swift-authrpc.google")
    ) throws(OAuthError) {
        for scope in scopes
        where scope.isEmpty || !scope.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C }) {
            throw OAuthError(
                .invalidConfiguration,
                "scope \"\(QuotedText.quote(scope.prefix(80)))\" is empty or has a space, quote or backslash"
            )
        }
        self.credentials = credentials
        self.scopes = scopes.isEmpty ? [Self.cloudPlatformScope] : scopes
        self.transport = transport
        self.logger = logger
        switch credentials.credentialSource.wrapped {
        case .file(let path, let format):
            subjectToken = .file(path: path, format: format)
        case .url(let url, let headers, let format):
            subjectToken = .url(url, headers: headers, format: format)
        case .executable(let executable):
            subjectToken = .executable(
                ExecutableSubjectToken(
                    executable: executable,
                    audience: credentials.audience,
                    subjectTokenType: credentials.subjectTokenType,
                    impersonatedServiceAccount: credentials.impersonatedServiceAccount,
                    environment: environment,
                    logger: logger
                )
            )
        case .aws(let aws):
            subjectToken = .aws(
                AWSSubjectToken(
                    configuration: aws,
                    audience: credentials.audience,
                    environment: environment,
                    transport: transport
                )
            )
        }
    }

    /// Reads the subject token, exchanges it, and impersonates when the file says so.
    ///
    /// - Throws: ``/OAuth2/OAuthError``, its message naming the file, the source and the step:
    ///   ``/OAuth2/OAuthError/Kind/authorization`` when the Security Token Service or the IAM
    ///   Credentials API refused (the OAuth error code in ``/OAuth2/OAuthError/oauthErrorCode``);
    ///   ``/OAuth2/OAuthError/Kind/transient`` when an endpoint or the source could not be reached,
    ///   answered 5xx or timed out; ``/OAuth2/OAuthError/Kind/invalidConfiguration`` when the source
    ///   gave no usable token (a missing file, an executable that failed or is not allowed to
    ///   run, an expired token).
    public func fetchToken() async throws(OAuthError) -> FetchedAccessToken {
        let source = credentials.credentialSource
        logger.debug(
            "reading the subject token",
            metadata: ["source": "\(source.kind)", "location": "\(source.location)"]
        )
        let (subject, secrets) = try await readSubjectToken()

        let exchange = TokenExchange(
            audience: credentials.audience,
            subjectTokenType: credentials.subjectTokenType,
            // The federated token only has to call IAM Credentials when it impersonates; the
            // scopes asked for go on the impersonated token (google-auth does the same).
            scopes: credentials.serviceAccountImpersonationURL == nil ? scopes : [Self.iamScope],
            workforcePoolUserProject: credentials.workforcePoolUserProject,
            hasClient: credentials.clientID != nil
        )
        let client = credentials.clientID.map {
            OAuthClient(id: $0, secret: credentials.clientSecret, authentication: .clientSecretBasic)
        }
        logger.debug(
            "exchanging the subject token",
            metadata: [
                "endpoint": "\(GrantRequest.redacted(credentials.tokenURL))", "audience": "\(credentials.audience)",
            ]
        )
        let federated: FetchedAccessToken
        do throws(OAuthError) {
            federated = try await GrantRequest.requestToken(
                at: credentials.tokenURL,
                parameters: exchange.parameters(subjectToken: subject),
                client: client,
                secrets: [subject] + secrets,
                transport: transport
            )
        } catch {
            throw failure(
                "exchanging the subject token at the Security Token Service \(GrantRequest.redacted(credentials.tokenURL))",
                error
            )
        }
        guard let impersonationURL = credentials.serviceAccountImpersonationURL,
            let account = credentials.impersonatedServiceAccount
        else { return federated }

        logger.debug("impersonating a service account", metadata: ["account": "\(account)"])
        do throws(OAuthError) {
            return try await IAMCredentials.generateAccessToken(
                at: impersonationURL,
                sourceToken: federated.accessToken,
                delegates: [],
                scopes: scopes,
                lifetime: credentials.impersonationLifetime,
                transport: transport
            )
        } catch {
            throw failure("impersonating \(account) at \(GrantRequest.redacted(impersonationURL))", error)
        }
    }

    /// The subject token and the values no message may show besides it.
    private func readSubjectToken() async throws(OAuthError) -> (String, [String]) {
        let source = credentials.credentialSource
        do throws(OAuthError) {
            switch subjectToken {
            case .file(let path, let format):
                return (try SubjectTokenFile.token(at: path, format: format), [])
            case .url(let url, let headers, let format):
                let token = try await URLSubjectToken.fetch(url, headers: headers, format: format, transport: transport)
                return (token, headers.map(\.value))
            case .executable(let executable):
                return (try await executable.token(), [])
            case .aws(let aws):
                return try await aws.token()
            }
        } catch {
            throw failure("reading the subject token from \(source.location)", error)
        }
    }

    /// `error` with the file, the source's kind and `step` before its message.
    private func failure(_ step: String, _ error: OAuthError) -> OAuthError {
        var error = error
        let file = credentials.source ?? "external_account credentials"
        error.message = "\(file) (\(credentials.credentialSource.kind) source): \(step): \(error.message)"
        return error
    }

    /// The impersonated service account, else the pool provider; the file and the quota project.
    public var identity: GoogleCredentialIdentity { credentials.identity }

    /// The source, the Security Token Service, the impersonated account and the scopes; never a
    /// token or secret.
    public var description: String {
        var text =
            "ExternalAccountTokenSource(\(credentials.credentialSource), Security Token Service \(GrantRequest.redacted(credentials.tokenURL))"
        if let account = credentials.impersonatedServiceAccount { text += ", impersonating \(account)" }
        return text + ", scopes: \(scopes.joined(separator: " ")))"
    }
}
