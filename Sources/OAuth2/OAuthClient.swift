/// How the client proves who it is at the token endpoint (RFC 6749 section 2.3).
///
/// A struct rather than an enum so that later versions can add methods (`private_key_jwt`,
/// mutual TLS) without breaking code that names them. It is stored (``OAuthClient`` is
/// `Codable`) as its ``rawValue``, the method's name in the OAuth registry.
public struct ClientAuthenticationMethod: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    enum Wrapped: String, Sendable, Hashable {
        case none
        case clientSecretBasic = "client_secret_basic"
        case clientSecretPost = "client_secret_post"
    }

    let wrapped: Wrapped

    private init(_ wrapped: Wrapped) {
        self.wrapped = wrapped
    }

    /// A public client: only `client_id` in the form (installed apps, CLIs, PKCE).
    public static let none = Self(.none)
    /// `client_id:client_secret` in HTTP Basic (form-encoded first, per RFC 6749 section 2.3.1).
    public static let clientSecretBasic = Self(.clientSecretBasic)
    /// `client_id` and `client_secret` in the form body.
    public static let clientSecretPost = Self(.clientSecretPost)

    /// The method's name in the OAuth Token Endpoint Authentication Methods registry (RFC 7591):
    /// `none`, `client_secret_basic`, `client_secret_post`.
    public var rawValue: String { wrapped.rawValue }

    /// The method named `rawValue`, or `nil` for one this version does not support (decoding
    /// such a name fails).
    public init?(rawValue: String) {
        guard let wrapped = Wrapped(rawValue: rawValue) else { return nil }
        self.init(wrapped)
    }

    /// The method's name (``rawValue``).
    public var description: String { rawValue }
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
