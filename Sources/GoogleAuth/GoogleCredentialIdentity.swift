/// Who a Google credential acts as and where it came from, for display: never a secret.
public struct GoogleCredentialIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The kinds of Google credential, named as in the credential files' `type`.
    public enum Kind: String, Sendable, Hashable {
        /// A service account's key (`"type": "service_account"`).
        case serviceAccount = "service_account"
        /// A user's refresh token from gcloud (`"type": "authorized_user"`).
        case authorizedUser = "authorized_user"
        /// The service account of a Compute Engine instance, through its metadata server.
        case computeEngine = "compute_engine"
    }

    /// The kind of credential.
    public var kind: Kind
    /// Who it acts as: a service account's `client_email`, an authorized user's OAuth
    /// `client_id` (the file does not say which user), or the metadata server's account
    /// (`default` until asked).
    public var principal: String
    /// Where it came from: a file's path, or `metadata server at HOST`.
    public var source: String?
    /// The project the credential belongs to (`project_id`), when it says.
    public var projectID: String?
    /// The project billed for quota (`quota_project_id`), when the credential names one; send it
    /// as `x-goog-user-project`.
    public var quotaProjectID: String?

    /// Creates an identity.
    public init(
        kind: Kind,
        principal: String,
        source: String? = nil,
        projectID: String? = nil,
        quotaProjectID: String? = nil
    ) {
        self.kind = kind
        self.principal = principal
        self.source = source
        self.projectID = projectID
        self.quotaProjectID = quotaProjectID
    }

    /// `service_account sa@project.iam.gserviceaccount.com (from /path/key.json)`.
    public var description: String {
        var text = "\(kind.rawValue) \(principal)"
        if let source { text += " (from \(source))" }
        if let quotaProjectID { text += ", quota project \(quotaProjectID)" }
        return text
    }
}
