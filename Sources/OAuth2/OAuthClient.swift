/// How the client proves who it is at the token endpoint (RFC 6749 section 2.3).
public enum ClientAuthenticationMethod: String, Sendable, Hashable, Codable {
    /// A public client: only `client_id` in the form (installed apps, CLIs, PKCE).
    case none
    /// `client_id:client_secret` in HTTP Basic (form-encoded first, per RFC 6749 section 2.3.1).
    case clientSecretBasic = "client_secret_basic"
    /// `client_id` and `client_secret` in the form body.
    case clientSecretPost = "client_secret_post"
}

/// An OAuth 2.0 client registration: its id, its secret if it has one, and how it authenticates.
public struct OAuthClient: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The client identifier.
    public var id: String
    /// The client secret, for confidential clients (and Google's "installed app" clients, whose
    /// secret is not secret but still required). Never printed.
    public var secret: String?
    /// How the client authenticates at the token endpoint.
    public var authentication: ClientAuthenticationMethod

    /// Creates a client. Without `authentication`, a client with a secret uses
    /// `client_secret_basic` and one without uses `none`.
    public init(id: String, secret: String? = nil, authentication: ClientAuthenticationMethod? = nil) {
        self.id = id
        self.secret = secret
        self.authentication = authentication ?? (secret == nil ? .none : .clientSecretBasic)
    }

    /// The id and the method; never the secret.
    public var description: String {
        "OAuthClient(id: \(id), secret: \(secret == nil ? "none" : "<redacted>"), authentication: \(authentication.rawValue))"
    }
}
