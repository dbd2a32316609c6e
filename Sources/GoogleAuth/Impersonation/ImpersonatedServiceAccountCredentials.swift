public import Foundation
public import OAuth2

/// The credential file `gcloud auth application-default login --impersonate-service-account`
/// writes (`"type": "impersonated_service_account"`): a source credential
/// (`source_credentials`, a user's authorized_user credentials or a service account's key), the
/// `service_account_impersonation_url` of the account to act as, and the `delegates` between them.
///
/// The target account is read from the URL (`…/serviceAccounts/EMAIL:generateAccessToken`), as
/// google-auth reads it, and the URL must be https (http only to a loopback address). Nothing
/// secret appears in a `description` or an error.
public struct ImpersonatedServiceAccountCredentials: Sendable, CustomStringConvertible {
    /// The `generateAccessToken` URL (`service_account_impersonation_url`).
    public let impersonationURL: URL
    /// The service account acted as, from ``impersonationURL``.
    public let targetPrincipal: String
    /// The chain between the source and the target (`projects/-/serviceAccounts/EMAIL`).
    public let delegates: [String]
    /// The source credential.
    public let sourceCredential: ApplicationDefaultCredentials.Credential
    /// The project billed for quota (`quota_project_id`), when the file names one.
    public let quotaProjectID: String?
    /// Where the file was read from (a path).
    public let source: String?

    /// The scope the source's tokens are asked for: what the IAM Credentials API takes.
    public static let sourceScope = "https://www.googleapis.com/auth/cloud-platform"

    /// Reads the file's JSON.
    ///
    /// - Throws: ``/OAuth2/OAuthError/Kind/invalidConfiguration`` naming the field that is missing
    ///   or wrong (never a secret's value), or a source of a type that cannot impersonate here.
    public init(json data: Data, source: String? = nil) throws(OAuthError) {
        try self.init(
            CredentialFile(json: data, source: source ?? "the impersonated_service_account credentials"),
            source: source
        )
    }

    /// Reads the file at `path`.
    public init(contentsOfFile path: String) throws(OAuthError) {
        try self.init(CredentialFile(contentsOfFile: path), source: path)
    }

    init(_ file: CredentialFile, source: String?) throws(OAuthError) {
        let type = try file.type()
        guard type == "impersonated_service_account" else {
            throw OAuthError(
                .invalidConfiguration,
                "\(file.source) has type \(CredentialFile.shown(type: type)), not impersonated_service_account"
            )
        }
        let text = try file.token("service_account_impersonation_url", maximumLength: 2048)!
        guard let url = URL(string: text), let target = Self.target(in: url) else {
            throw OAuthError(
                .invalidConfiguration,
                "service_account_impersonation_url in \(file.source) is not a …/serviceAccounts/EMAIL:generateAccessToken URL"
            )
        }
        targetPrincipal = try ServiceAccountName.email(
            target,
            role: "the account in service_account_impersonation_url of \(file.source)"
        )
        impersonationURL = try ServiceAccountName.endpoint(
            url,
            for: targetPrincipal,
            method: "generateAccessToken",
            universeDomain: GoogleCredentialIdentity.defaultUniverseDomain
        )
        var delegates: [String] = []
        for delegate in try file.strings("delegates") {
            delegates.append(try ServiceAccountName.delegate(delegate))
        }
        self.delegates = delegates
        quotaProjectID = try file.token("quota_project_id", maximumLength: 128, required: false)
        let nested = try file.nested("source_credentials")
        let sourceType = try nested.type()
        switch sourceType {
        case "authorized_user":
            sourceCredential = .authorizedUser(try AuthorizedUserCredentials(nested, source: source))
        case "service_account":
            sourceCredential = .serviceAccount(try ServiceAccountKey(nested, source: source))
        default:
            throw OAuthError(
                .invalidConfiguration,
                "source_credentials in \(file.source) is a \(CredentialFile.shown(type: sourceType, quoted: true)) credential; supported: authorized_user, service_account"
            )
        }
        self.source = source
    }

    /// The email in `…/serviceAccounts/EMAIL:generateAccessToken`.
    private static func target(in url: URL) -> String? {
        let path = url.path
        let suffix = ":generateAccessToken"
        guard path.hasSuffix(suffix), let slash = path.lastIndex(of: "/") else { return nil }
        let email = path[path.index(after: slash)..<path.index(path.endIndex, offsetBy: -suffix.count)]
        return email.isEmpty ? nil : String(email)
    }

    /// The `generateIdToken` URL on the same host: ``impersonationURL`` with the method changed.
    public var idTokenURL: URL {
        let text = impersonationURL.absoluteString
        guard let range = text.range(of: ":generateAccessToken", options: .backwards),
            let url = URL(string: text.replacingCharacters(in: range, with: ":generateIdToken"))
        else { return impersonationURL }
        return url
    }

    /// The target, the chain and the file.
    public var description: String {
        "ImpersonatedServiceAccountCredentials(\(targetPrincipal), delegates: [\(delegates.joined(separator: ", "))], source: \(sourceCredential), url \(GrantRequest.redacted(impersonationURL)))"
    }
}
