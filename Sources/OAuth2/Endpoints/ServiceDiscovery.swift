public import Foundation

extension ServiceConfiguration {
    /// Which well-known document discovery reads.
    public enum DiscoveryDocument: Sendable {
        /// OpenID Connect Discovery: `/.well-known/openid-configuration` appended to the issuer.
        case openIDConnect
        /// RFC 8414: `/.well-known/oauth-authorization-server` inserted before the issuer's path.
        case oauthAuthorizationServer
        /// OpenID Connect first; RFC 8414 when the issuer has no OpenID Connect document (404).
        case automatic
    }

    /// Reads the issuer's discovery document and checks that it speaks for `issuer`.
    ///
    /// The issuer and every endpoint the document names must use https (plain http is accepted
    /// on loopback addresses only); nothing is sent to an http issuer elsewhere.
    ///
    /// - Throws: ``OAuthError`` — ``OAuthError/Kind/transient`` when the issuer cannot be reached
    ///   or answers with a server error, ``OAuthError/Kind/invalidConfiguration`` when the issuer
    ///   is not https, or the document is missing, not JSON, lacks a token endpoint, names another
    ///   issuer, redirects, or names an endpoint that is not https.
    public static func discover(
        issuer: URL,
        using document: DiscoveryDocument = .automatic,
        transport: any OAuthTransport = HTTP1OAuthTransport.standard
    ) async throws(OAuthError) -> ServiceConfiguration {
        try EndpointSecurity.require(issuer, for: "the issuer")
        let documents: [DiscoveryDocument] =
            document == .automatic ? [.openIDConnect, .oauthAuthorizationServer] : [document]
        var tried: [String] = []
        for document in documents {
            let url = discoveryURL(issuer: issuer, document: document)
            if let configuration = try await fetch(url, issuer: issuer, transport: transport) {
                return configuration
            }
            tried.append(url.absoluteString)
        }
        throw OAuthError(
            .invalidConfiguration,
            "no discovery document for \(issuer.absoluteString) (HTTP 404 at \(tried.joined(separator: " and ")))"
        )
    }

    /// The URL of a discovery document for `issuer`.
    static func discoveryURL(issuer: URL, document: DiscoveryDocument) -> URL {
        var components = URLComponents(url: issuer, resolvingAgainstBaseURL: false) ?? URLComponents()
        var path = components.percentEncodedPath
        if path.hasSuffix("/") { path.removeLast() }
        switch document {
        case .openIDConnect, .automatic:
            components.percentEncodedPath = path + "/.well-known/openid-configuration"
        case .oauthAuthorizationServer:
            components.percentEncodedPath = "/.well-known/oauth-authorization-server" + path
        }
        return components.url ?? issuer
    }

    /// The configuration in the document at `url`; `nil` when there is none (404).
    private static func fetch(
        _ url: URL,
        issuer: URL,
        transport: any OAuthTransport
    ) async throws(OAuthError) -> ServiceConfiguration? {
        let response = try await OAuthHTTP.send(
            OAuthHTTPRequest(url: url, headers: [("Accept", "application/json")]),
            transport: transport,
            purpose: "discovery"
        )
        if response.statusCode >= 500 {
            throw OAuthError(.transient, "discovery at \(url.redacted) failed: HTTP \(response.statusCode)")
        }
        if response.statusCode == 404 { return nil }
        guard response.statusCode == 200 else {
            throw OAuthError(
                .invalidConfiguration,
                "no discovery document at \(url.redacted) (HTTP \(response.statusCode))"
            )
        }
        do throws(OAuthError) {
            return try ServiceConfiguration(discoveryDocument: response.body, issuer: issuer)
        } catch {
            throw OAuthError(error.kind, "the discovery document at \(url.redacted) \(error.message)")
        }
    }

    /// The longest endpoint URL a discovery document may name.
    static let maximumEndpointLength = 2048

    /// Reads a discovery document (OpenID Connect Discovery 1.0 / RFC 8414) for `issuer`.
    ///
    /// Its `issuer` must be `issuer` (one trailing slash aside), and every endpoint it names must
    /// be an absolute https URL (http on loopback) of at most 2 KiB, so that no request made from
    /// it carries secrets in the clear.
    ///
    /// - Throws: ``OAuthError/Kind/invalidConfiguration`` whose message completes "the discovery
    ///   document …": not a JSON object, no or another issuer, no token endpoint, a malformed or
    ///   insecure endpoint (named). Server text is quoted only in part.
    package init(discoveryDocument data: Data, issuer: URL) throws(OAuthError) {
        guard let fields = JSONFields(parsing: data) else {
            throw OAuthError(.invalidConfiguration, "is not a JSON object")
        }
        guard let announced = try? fields.string("issuer") else {
            throw OAuthError(.invalidConfiguration, "names no issuer")
        }
        guard Self.sameIssuer(announced, issuer.absoluteString) else {
            throw OAuthError(
                .invalidConfiguration,
                "is for issuer \(TokenSyntax.bounded(announced, to: 120)), not \(issuer.absoluteString)"
            )
        }
        func endpoint(_ key: String) throws(OAuthError) -> URL? {
            guard fields.contains(key) else { return nil }
            guard let text = try? fields.string(key), text.utf8.count <= Self.maximumEndpointLength,
                let url = URL(string: text), url.scheme != nil, url.host != nil
            else {
                throw OAuthError(.invalidConfiguration, "has an invalid \(key)")
            }
            guard EndpointSecurity.allows(url) else {
                throw OAuthError(
                    .invalidConfiguration,
                    "names \(key) \(TokenSyntax.bounded(url.redacted, to: 120)), which is not https: OAuth endpoints must use https (plain http is allowed on loopback addresses only)"
                )
            }
            return url
        }
        guard let tokenEndpoint = try endpoint("token_endpoint") else {
            throw OAuthError(.invalidConfiguration, "has no token_endpoint")
        }
        self.init(
            issuer: URL(string: announced),
            authorizationEndpoint: try endpoint("authorization_endpoint"),
            tokenEndpoint: tokenEndpoint,
            deviceAuthorizationEndpoint: try endpoint("device_authorization_endpoint"),
            revocationEndpoint: try endpoint("revocation_endpoint"),
            userinfoEndpoint: try endpoint("userinfo_endpoint")
        )
    }

    /// Issuer identifiers compare exactly, except that one trailing slash is not a difference.
    private static func sameIssuer(_ a: String, _ b: String) -> Bool {
        func trimmed(_ text: String) -> Substring { text.hasSuffix("/") ? text.dropLast() : Substring(text) }
        return trimmed(a) == trimmed(b)
    }
}
