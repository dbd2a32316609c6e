import Foundation
public import OAuth2

/// Self-signed JWTs as access tokens ("JWT access"): no token endpoint, the service account's
/// key signs a token for one service, what Google's libraries do for gRPC.
///
/// The JWT has `iss` = `sub` = the account's email, `kid` = its key id, and either
/// `aud` = `https://<service host>/` (``Audience/service(host:)``, from the call's authority
/// with ``Audience/forAuthority(_:)``) or a `scope` claim (``Audience/scopes(_:)``). A token is
/// good for one audience, so a holder keeps one per audience. Each ``fetchToken()`` signs a new
/// one, valid for ``lifetime``; no request leaves the process.
public struct ServiceAccountJWTAccessSource: GoogleTokenSource {
    /// What a self-signed JWT is for.
    public enum Audience: Sendable, Hashable, CustomStringConvertible {
        /// The service at this host: `aud` = `https://<host>/`.
        case service(host: String)
        /// These scopes, in a `scope` claim and without `aud`.
        case scopes([String])

        /// The audience for a call to `authority` (`host`, `host:port`, `[v6]:port`): the host,
        /// lowercased, without the port.
        ///
        /// - Throws: ``/OAuth2/OAuthError/Kind/invalidConfiguration`` when `authority` is not a host
        ///   with an optional port.
        public static func forAuthority(_ authority: String) throws(OAuthError) -> Audience {
            guard let host = ServiceHost.host(ofAuthority: authority) else {
                throw OAuthError(
                    .invalidConfiguration,
                    "\"\(authority.prefix(100))\" is not a host[:port] authority; it cannot name a JWT audience"
                )
            }
            return .service(host: host)
        }

        /// The `aud` claim, or `nil` for scopes.
        public var audienceClaim: String? {
            if case .service(let host) = self { return "https://\(host.lowercased())/" }
            return nil
        }

        /// `https://<host>/`, or `scopes: ...`.
        public var description: String {
            switch self {
            case .service: return audienceClaim ?? ""
            case .scopes(let scopes): return "scopes: \(scopes.joined(separator: " "))"
            }
        }
    }

    /// Google accepts self-signed JWTs that live at most an hour.
    public static let maximumLifetime: Duration = .seconds(3600)

    /// The key that signs.
    public let key: ServiceAccountKey
    /// What the tokens are for.
    public let audience: Audience
    /// How long each token lives.
    public let lifetime: Duration

    /// A source of self-signed JWTs for `audience`.
    ///
    /// - Throws: ``/OAuth2/OAuthError/Kind/invalidConfiguration`` for a lifetime outside 1 s...1 h,
    ///   empty scopes, or a host that cannot go into a URL.
    public init(key: ServiceAccountKey, audience: Audience, lifetime: Duration = maximumLifetime) throws(OAuthError) {
        guard lifetime >= .seconds(1), lifetime <= Self.maximumLifetime else {
            throw OAuthError(.invalidConfiguration, "a self-signed JWT lives between 1 s and 3600 s, not \(lifetime)")
        }
        switch audience {
        case .service(let host):
            guard ServiceHost.host(ofAuthority: host) == host.lowercased() else {
                throw OAuthError(
                    .invalidConfiguration,
                    "\"\(host.prefix(100))\" is not a host name or address for a JWT audience"
                )
            }
        case .scopes(let scopes):
            guard !scopes.isEmpty,
                scopes.allSatisfy({ !$0.isEmpty && !$0.contains(where: { $0 == " " || $0.isNewline }) })
            else {
                throw OAuthError(
                    .invalidConfiguration,
                    "a self-signed JWT for scopes needs at least one scope, none empty or with spaces"
                )
            }
        }
        self.key = key
        self.audience = audience
        self.lifetime = lifetime
    }

    /// A new self-signed JWT, valid from now for ``lifetime``.
    public func fetchToken() async throws(OAuthError) -> FetchedAccessToken {
        try mint(issuedAt: Date())
    }

    /// The JWT issued at `issuedAt`.
    func mint(issuedAt: Date) throws(OAuthError) -> FetchedAccessToken {
        let now = Int(issuedAt.timeIntervalSince1970)
        let seconds = Int(lifetime.components.seconds)
        var claims = JWTClaims(iss: key.clientEmail, sub: key.clientEmail, iat: now, exp: now + seconds)
        switch audience {
        case .service: claims.aud = audience.audienceClaim
        case .scopes(let scopes): claims.scope = scopes.joined(separator: " ")
        }
        let token = try key.signedJWT(claims)
        return FetchedAccessToken(
            accessToken: token,
            receivedAt: Date(timeIntervalSince1970: TimeInterval(now)),
            lifetime: .seconds(seconds),
            tokenType: "Bearer"
        )
    }

    /// The account.
    public var identity: GoogleCredentialIdentity { key.identity }

    /// The account and the audience; never the key or a token.
    public var description: String {
        "ServiceAccountJWTAccessSource(\(key.clientEmail), \(audience))"
    }
}

/// Hosts as they appear in `:authority` and in a JWT audience.
enum ServiceHost {
    /// The lowercased host of `authority` (`host`, `host:port`, `[v6]`, `[v6]:port`), brackets
    /// kept for IPv6; `nil` when it is anything else (a path, user information, spaces).
    static func host(ofAuthority authority: String) -> String? {
        let text = authority.lowercased()
        guard !text.isEmpty, text.count <= 255 else { return nil }
        var host = Substring(text)
        var port: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[...close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.first == ":" else { return nil }
                port = rest.dropFirst()
            }
            let inside = host.dropFirst().dropLast()
            guard !inside.isEmpty, inside.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
        } else {
            if let colon = text.firstIndex(of: ":") {
                host = text[..<colon]
                port = text[text.index(after: colon)...]
            }
            guard !host.isEmpty,
                host.allSatisfy({ ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "-" || $0 == "." })
            else { return nil }
        }
        if let port {
            guard !port.isEmpty, port.count <= 5, port.allSatisfy({ $0.isASCII && $0.isNumber }), Int(port)! <= 65535
            else { return nil }
        }
        return String(host)
    }
}
