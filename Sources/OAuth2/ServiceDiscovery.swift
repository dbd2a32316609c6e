import Foundation

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
    /// - Throws: ``OAuthError`` — ``OAuthError/Kind/transient`` when the issuer cannot be reached
    ///   or answers with a server error, ``OAuthError/Kind/invalidConfiguration`` when the document
    ///   is missing, not JSON, lacks a token endpoint, or names another issuer.
    public static func discover(
        issuer: URL,
        using document: DiscoveryDocument = .automatic,
        transport: any OAuthTransport = URLSessionOAuthTransport()
    ) async throws(OAuthError) -> ServiceConfiguration {
        let documents: [DiscoveryDocument] = document == .automatic ? [.openIDConnect, .oauthAuthorizationServer] : [document]
        var tried: [String] = []
        for document in documents {
            let url = discoveryURL(issuer: issuer, document: document)
            if let configuration = try await fetch(url, issuer: issuer, transport: transport) {
                return configuration
            }
            tried.append(url.absoluteString)
        }
        throw OAuthError(.invalidConfiguration, "no discovery document for \(issuer.absoluteString) (HTTP 404 at \(tried.joined(separator: " and ")))")
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
    private static func fetch(_ url: URL, issuer: URL, transport: any OAuthTransport) async throws(OAuthError) -> ServiceConfiguration? {
        let response = try await OAuthHTTP.send(OAuthHTTPRequest(url: url, headers: [("Accept", "application/json")]), transport: transport, purpose: "discovery")
        if response.statusCode >= 500 {
            throw OAuthError(.transient, "discovery at \(url) failed: HTTP \(response.statusCode)")
        }
        if response.statusCode == 404 { return nil }
        guard response.statusCode == 200 else {
            throw OAuthError(.invalidConfiguration, "no discovery document at \(url) (HTTP \(response.statusCode))")
        }
        guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any] else {
            throw OAuthError(.invalidConfiguration, "the discovery document at \(url) is not a JSON object")
        }
        guard let announced = object["issuer"] as? String else {
            throw OAuthError(.invalidConfiguration, "the discovery document at \(url) names no issuer")
        }
        guard Self.sameIssuer(announced, issuer.absoluteString) else {
            throw OAuthError(.invalidConfiguration, "the discovery document at \(url) is for issuer \(announced), not \(issuer.absoluteString)")
        }
        func endpoint(_ key: String) throws(OAuthError) -> URL? {
            guard let value = object[key] else { return nil }
            guard let text = value as? String, let url = URL(string: text), url.scheme != nil, url.host != nil else {
                throw OAuthError(.invalidConfiguration, "the discovery document at \(url) has an invalid \(key)")
            }
            return url
        }
        guard let tokenEndpoint = try endpoint("token_endpoint") else {
            throw OAuthError(.invalidConfiguration, "the discovery document at \(url) has no token_endpoint")
        }
        return ServiceConfiguration(
            issuer: URL(string: announced),
            authorizationEndpoint: try endpoint("authorization_endpoint"),
            tokenEndpoint: tokenEndpoint,
            deviceAuthorizationEndpoint: try endpoint("device_authorization_endpoint"),
            revocationEndpoint: try endpoint("revocation_endpoint"),
            userinfoEndpoint: try endpoint("userinfo_endpoint"))
    }

    /// Issuer identifiers compare exactly, except that one trailing slash is not a difference.
    private static func sameIssuer(_ a: String, _ b: String) -> Bool {
        func trimmed(_ text: String) -> Substring { text.hasSuffix("/") ? text.dropLast() : Substring(text) }
        return trimmed(a) == trimmed(b)
    }
}
