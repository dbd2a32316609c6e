public import Foundation
public import OAuth2

/// Workload or workforce identity federation credentials: an `external_account` file (AIP-4117),
/// as `gcloud iam workload-identity-pools create-cred-config`, google-github-actions/auth and the
/// Cloud console write it. No key is in it: it says where to get a token another identity
/// provider issued (the *subject token*: a GitHub Actions or Kubernetes OIDC token, an Azure
/// managed identity's token, a signed AWS request, ...), which Google's Security Token Service
/// exchanges for a Google access token (RFC 8693), optionally then used to impersonate a
/// service account.
///
/// Reading the file checks every field (the URLs, the source, the bounds) and reads nothing
/// else: the subject token is read when a token is needed (``ExternalAccountTokenSource``).
/// The client secret, when there is one, never appears in a `description` or an error.
///
/// The Security Token Service and impersonation endpoints must be https (http only to a
/// loopback address); only the URLs the file names for its source (an instance metadata
/// service's) may be plain http.
public struct ExternalAccountCredentials: Sendable, CustomStringConvertible {
    /// The file's `type`.
    public static let fileType = "external_account"
    /// The subject token type of an AWS source's signed request.
    public static let awsSubjectTokenType = "urn:ietf:params:aws:token-type:aws4_request"
    /// The bounds of `service_account_impersonation.token_lifetime_seconds`: 10 minutes to 12 hours.
    public static let impersonationLifetimes: ClosedRange<Duration> = .seconds(600) ... .seconds(43_200)
    /// The impersonated token's lifetime when the file does not say: one hour.
    public static let defaultImpersonationLifetime: Duration = .seconds(3600)

    /// The workload or workforce pool provider the token is exchanged for (`audience`):
    /// `//iam.googleapis.com/projects/NUMBER/locations/global/workloadIdentityPools/POOL/providers/PROVIDER`
    /// or `//iam.googleapis.com/locations/global/workforcePools/POOL/providers/PROVIDER`.
    public let audience: String
    /// What the subject token is (`subject_token_type`): `urn:ietf:params:oauth:token-type:jwt`,
    /// `...:id_token`, `...:saml2`, or ``awsSubjectTokenType``.
    public let subjectTokenType: String
    /// The Security Token Service's token endpoint (`token_url`;
    /// `https://sts.googleapis.com/v1/token` by default).
    public let tokenURL: URL
    /// Where the subject token comes from.
    public let credentialSource: ExternalAccountCredentialSource
    /// The IAM Credentials `generateAccessToken` URL of the service account to impersonate
    /// (`service_account_impersonation_url`), if any.
    public let serviceAccountImpersonationURL: URL?
    /// The impersonated service account's email, read from ``serviceAccountImpersonationURL``.
    public let impersonatedServiceAccount: String?
    /// How long an impersonated token lives (`service_account_impersonation.token_lifetime_seconds`).
    public let impersonationLifetime: Duration
    /// The OAuth client that authenticates to the Security Token Service (`client_id`), if any.
    public let clientID: String?
    /// The project billed for quota (`quota_project_id`), if the file names one.
    public let quotaProjectID: String?
    /// The project a workforce pool user's calls are billed to (`workforce_pool_user_project`).
    public let workforcePoolUserProject: String?
    /// The universe domain (`universe_domain`; `googleapis.com` by default).
    public let universeDomain: String
    /// Where the credentials were read from (a path), for ``identity``.
    public let source: String?

    let clientSecret: String?

    /// Reads credentials from the JSON of an external_account file.
    ///
    /// - Throws: ``/OAuth2/OAuthError/Kind/invalidConfiguration`` naming the field that is missing or
    ///   wrong, never its value.
    public init(json data: Data, source: String? = nil) throws(OAuthError) {
        try self.init(CredentialFile(json: data, source: source ?? "the external_account credentials"), source: source)
    }

    /// Reads the external_account file at `path`.
    ///
    /// - Throws: ``/OAuth2/OAuthError/Kind/invalidConfiguration`` when it cannot be read or a field is
    ///   missing or wrong.
    public init(contentsOfFile path: String) throws(OAuthError) {
        try self.init(CredentialFile(contentsOfFile: path), source: path)
    }

    init(_ file: CredentialFile, source: String?) throws(OAuthError) {
        let type = try file.type()
        guard type == Self.fileType else {
            throw OAuthError(
                .invalidConfiguration,
                "\(file.source) has type \(CredentialFile.shown(type: type)), not \(Self.fileType)"
            )
        }
        let fields = ConfigurationFields(file)
        audience = try fields.token("audience", maximumLength: 1024, required: true)!
        subjectTokenType = try fields.token("subject_token_type", maximumLength: 256, required: true)!
        universeDomain = try Self.universeDomain(fields)

        if let url = try fields.url("token_url") {
            tokenURL = try Self.secure(url, field: "token_url", fields: fields)
        } else {
            tokenURL = URL(string: "https://sts.\(universeDomain)/v1/token")!
        }

        if let url = try fields.url("service_account_impersonation_url") {
            serviceAccountImpersonationURL = try Self.secure(
                url,
                field: "service_account_impersonation_url",
                fields: fields
            )
            impersonatedServiceAccount = try Self.impersonatedEmail(in: url, fields: fields)
        } else {
            serviceAccountImpersonationURL = nil
            impersonatedServiceAccount = nil
        }
        impersonationLifetime = try Self.impersonationLifetime(fields)

        clientID = try fields.token("client_id", maximumLength: 512)
        clientSecret = try fields.token("client_secret", maximumLength: 512)
        if clientSecret != nil, clientID == nil {
            throw OAuthError(.invalidConfiguration, "\(fields.source) has a client_secret but no client_id")
        }
        quotaProjectID = try fields.token("quota_project_id", maximumLength: 128)

        let isWorkforcePool = Self.isWorkforcePoolAudience(audience)
        workforcePoolUserProject = try fields.token("workforce_pool_user_project", maximumLength: 128)
        if workforcePoolUserProject != nil, !isWorkforcePool {
            throw OAuthError(
                .invalidConfiguration,
                "\(fields.place("workforce_pool_user_project")) is only for a workforce pool, and the audience names a workload identity pool"
            )
        }

        guard let sourceFields = try fields.nested("credential_source") else {
            throw OAuthError(.invalidConfiguration, "\(fields.source) has no credential_source")
        }
        credentialSource = try Self.credentialSource(sourceFields, subjectTokenType: subjectTokenType)
        self.source = source
    }

    /// Whether the audience names a workforce pool (users) rather than a workload identity pool.
    public var isWorkforcePool: Bool { Self.isWorkforcePoolAudience(audience) }

    /// Who the tokens act as (the impersonated service account, else the pool's provider), the
    /// file and the quota project.
    public var identity: GoogleCredentialIdentity {
        GoogleCredentialIdentity(
            kind: .externalAccount,
            principal: impersonatedServiceAccount ?? audience,
            source: source,
            quotaProjectID: quotaProjectID
        )
    }

    /// The audience, the source, the impersonated account and the quota project; never the
    /// client secret.
    public var description: String {
        var text = "ExternalAccountCredentials(audience: \(audience), source: \(credentialSource)"
        if let impersonatedServiceAccount { text += ", impersonating: \(impersonatedServiceAccount)" }
        if let clientID { text += ", client: \(clientID)" }
        if let quotaProjectID { text += ", quota project: \(quotaProjectID)" }
        if clientSecret != nil { text += ", clientSecret: <redacted>" }
        return text + ")"
    }

    // MARK: - Fields

    /// `//iam.googleapis.com/locations/LOCATION/workforcePools/...`, as google-auth tells them apart.
    static func isWorkforcePoolAudience(_ audience: String) -> Bool {
        let prefix = "//iam.googleapis.com/locations/"
        guard audience.hasPrefix(prefix) else { return false }
        let rest = audience.dropFirst(prefix.count)
        guard let slash = rest.firstIndex(of: "/"), slash != rest.startIndex else { return false }
        return rest[slash...].hasPrefix("/workforcePools/")
    }

    private static func universeDomain(_ fields: ConfigurationFields) throws(OAuthError) -> String {
        guard let domain = try fields.token("universe_domain", maximumLength: UniverseDomain.maximumLength) else {
            return GoogleCredentialIdentity.defaultUniverseDomain
        }
        return try UniverseDomain.validated(domain, from: fields.place("universe_domain"))
    }

    /// `url` when it may carry a subject token or an access token: https, or http to loopback.
    private static func secure(_ url: URL, field: String, fields: ConfigurationFields) throws(OAuthError) -> URL {
        guard EndpointSecurity.allows(url) else {
            throw OAuthError(
                .invalidConfiguration,
                "\(fields.place(field)) is \(GrantRequest.redacted(url)): it must be https (plain http only to a loopback address), since tokens are sent there"
            )
        }
        return url
    }

    /// The email in `.../serviceAccounts/EMAIL:generateAccessToken`.
    private static func impersonatedEmail(in url: URL, fields: ConfigurationFields) throws(OAuthError) -> String {
        let suffix = ":generateAccessToken"
        let last = url.lastPathComponent
        let email = last.hasSuffix(suffix) ? String(last.dropLast(suffix.count)) : ""
        guard email.contains("@"), email.count <= 256,
            email.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") })
        else {
            throw OAuthError(
                .invalidConfiguration,
                "\(fields.place("service_account_impersonation_url")) does not end in /serviceAccounts/EMAIL:generateAccessToken"
            )
        }
        return email
    }

    private static func impersonationLifetime(_ fields: ConfigurationFields) throws(OAuthError) -> Duration {
        guard let options = try fields.nested("service_account_impersonation"),
            let seconds = try options.integer("token_lifetime_seconds")
        else { return defaultImpersonationLifetime }
        let lifetime = Duration.seconds(seconds)
        guard impersonationLifetimes.contains(lifetime) else {
            throw OAuthError(
                .invalidConfiguration,
                "\(fields.place("service_account_impersonation.token_lifetime_seconds")) is \(seconds); it must be 600 to 43200 seconds"
            )
        }
        return lifetime
    }
}
