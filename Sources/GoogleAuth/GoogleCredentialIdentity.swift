/// Who a Google credential acts as and where it came from, for display: never a secret.
public struct GoogleCredentialIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The kinds of Google credential, named as in the credential files' `type`.
    ///
    /// A struct rather than an enum so that later versions can add kinds (external accounts, ...)
    /// without breaking code that compares them. Compare with `==`, or `switch` with a `default`
    /// case.
    public struct Kind: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        enum Wrapped: String, Sendable, Hashable {
            case serviceAccount = "service_account"
            case authorizedUser = "authorized_user"
            case computeEngine = "compute_engine"
            case impersonatedServiceAccount = "impersonated_service_account"
            case externalAccount = "external_account"
            case externalAccountAuthorizedUser = "external_account_authorized_user"
        }

        let wrapped: Wrapped

        private init(_ wrapped: Wrapped) {
            self.wrapped = wrapped
        }

        /// A service account's key (`"type": "service_account"`).
        public static let serviceAccount = Self(.serviceAccount)
        /// A user's refresh token from gcloud (`"type": "authorized_user"`).
        public static let authorizedUser = Self(.authorizedUser)
        /// The service account of a Compute Engine instance, through its metadata server
        /// (`compute_engine`, a name of this package's: no file holds it).
        public static let computeEngine = Self(.computeEngine)
        /// A service account impersonated through the IAM Credentials API by another credential
        /// (`"type": "impersonated_service_account"`, what `gcloud auth application-default login
        /// --impersonate-service-account` writes).
        public static let impersonatedServiceAccount = Self(.impersonatedServiceAccount)
        /// Workload or workforce identity federation (`"type": "external_account"`): a token
        /// from another identity provider exchanged at Google's Security Token Service.
        public static let externalAccount = Self(.externalAccount)
        /// A workforce pool user's refresh token from gcloud
        /// (`"type": "external_account_authorized_user"`).
        public static let externalAccountAuthorizedUser = Self(.externalAccountAuthorizedUser)

        /// The kind's name: a credential file's `type` (`service_account`, `authorized_user`),
        /// or `compute_engine`.
        public var rawValue: String { wrapped.rawValue }

        /// The kind named `rawValue`, or `nil` for a name this version does not know.
        public init?(rawValue: String) {
            guard let wrapped = Wrapped(rawValue: rawValue) else { return nil }
            self.init(wrapped)
        }

        /// The kind's name (``rawValue``).
        public var description: String { rawValue }
    }

    /// The kind of credential.
    public var kind: Kind
    /// Who it acts as: a service account's `client_email`, an authorized user's OAuth
    /// `client_id` (the file does not say which user), the metadata server's account
    /// (`default` until asked), or for federation the impersonated service account, else the
    /// pool provider's audience (the external identity is known only to the provider).
    public var principal: String
    /// Where it came from: a file's path, or `metadata server at HOST`.
    public var source: String?
    /// The project the credential belongs to (`project_id`), when it says.
    public var projectID: String?
    /// The project billed for quota (`quota_project_id`), when the credential names one; send it
    /// as `x-goog-user-project`.
    public var quotaProjectID: String?
    /// Who impersonates whom, for an impersonated service account: the source credential's
    /// principal, each delegate, then ``principal``. Empty for the other kinds.
    public var chain: [String] = []
    /// The universe the credential belongs to (its file's `universe_domain`; ``defaultUniverseDomain``
    /// when it names none): its tokens are good only for endpoints in that universe. For the
    /// metadata server, ``defaultUniverseDomain`` until it is asked
    /// (``ComputeEngineTokenSource/universeDomain()``); in ``GoogleCredentials``, the universe
    /// expected, which the server's answer is checked against before the first token.
    public var universeDomain: String

    /// Google's public universe, `googleapis.com`: what a credential belongs to unless its file
    /// says otherwise, and the universe of the endpoints ``GoogleCredentials`` expects by default.
    public static let defaultUniverseDomain = "googleapis.com"

    /// Creates an identity.
    public init(
        kind: Kind,
        principal: String,
        source: String? = nil,
        projectID: String? = nil,
        quotaProjectID: String? = nil,
        universeDomain: String = defaultUniverseDomain
    ) {
        self.kind = kind
        self.principal = principal
        self.source = source
        self.projectID = projectID
        self.quotaProjectID = quotaProjectID
        self.universeDomain = universeDomain
    }

    /// `service_account sa@project.iam.gserviceaccount.com (from /path/key.json)`.
    public var description: String {
        var text = "\(kind.rawValue) \(principal)"
        if chain.count > 1 { text += " via \(chain.dropLast().joined(separator: " -> "))" }
        if let source { text += " (from \(source))" }
        if let quotaProjectID { text += ", quota project \(quotaProjectID)" }
        if universeDomain != Self.defaultUniverseDomain { text += ", universe \(universeDomain)" }
        return text
    }
}
