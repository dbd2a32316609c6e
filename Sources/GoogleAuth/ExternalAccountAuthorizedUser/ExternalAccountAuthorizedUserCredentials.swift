public import Foundation
public import OAuth2

/// A workforce pool user's credentials as `gcloud auth application-default login` writes them
/// after a workforce identity federation sign-in (`"type": "external_account_authorized_user"`):
/// an OAuth client of the Security Token Service and a refresh token.
///
/// The refresh goes to the file's `token_url` (Google's Security Token Service,
/// `https://sts.googleapis.com/v1/oauthtoken`), which must be https (http only to a loopback
/// address). The client secret and the refresh token never appear in a `description` or an
/// error.
public struct ExternalAccountAuthorizedUserCredentials: Sendable, CustomStringConvertible {
    /// The file's `type`.
    public static let fileType = "external_account_authorized_user"

    /// The workforce pool provider the user signed in through (`audience`).
    public let audience: String
    /// The OAuth client (`client_id`).
    public let clientID: String
    /// Where the refresh token is exchanged for access tokens (`token_url`).
    public let tokenURL: URL
    /// Where the refresh token can be revoked (`revoke_url`), when the file names it.
    public let revokeURL: URL?
    /// The project billed for quota (`quota_project_id`), when the file names one.
    public let quotaProjectID: String?
    /// Where the credentials were read from (a path), for ``identity``.
    public let source: String?

    let clientSecret: String
    let refreshToken: String

    /// Reads credentials from the JSON of an external_account_authorized_user file.
    ///
    /// - Throws: ``/OAuth2/OAuthError/Kind/invalidConfiguration`` naming the field that is missing or
    ///   wrong, never its value.
    public init(json data: Data, source: String? = nil) throws(OAuthError) {
        try self.init(
            CredentialFile(json: data, source: source ?? "the external_account_authorized_user credentials"),
            source: source
        )
    }

    /// Reads the external_account_authorized_user file at `path`.
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
        clientID = try fields.token("client_id", maximumLength: 512, required: true)!
        clientSecret = try fields.token("client_secret", maximumLength: 512, required: true)!
        refreshToken = try fields.token("refresh_token", maximumLength: 4096, required: true)!
        quotaProjectID = try fields.token("quota_project_id", maximumLength: 128)
        tokenURL = try Self.secure(fields.url("token_url", required: true)!, field: "token_url", fields: fields)
        revokeURL = try fields.url("revoke_url").map { url throws(OAuthError) in
            try Self.secure(url, field: "revoke_url", fields: fields)
        }
        self.source = source
    }

    /// The workforce pool provider (the user is known only to it), the file and the quota project.
    public var identity: GoogleCredentialIdentity {
        GoogleCredentialIdentity(
            kind: .externalAccountAuthorizedUser,
            principal: audience,
            source: source,
            quotaProjectID: quotaProjectID
        )
    }

    /// The audience, the client and the quota project; never the secret or the refresh token.
    public var description: String {
        var text = "ExternalAccountAuthorizedUserCredentials(audience: \(audience), client: \(clientID)"
        if let quotaProjectID { text += ", quota project: \(quotaProjectID)" }
        return text + ", clientSecret: <redacted>, refreshToken: <redacted>)"
    }

    private static func secure(_ url: URL, field: String, fields: ConfigurationFields) throws(OAuthError) -> URL {
        guard EndpointSecurity.allows(url) else {
            throw OAuthError(
                .invalidConfiguration,
                "\(fields.place(field)) is \(GrantRequest.redacted(url)): it must be https (plain http only to a loopback address), since the refresh token is sent there"
            )
        }
        return url
    }
}
