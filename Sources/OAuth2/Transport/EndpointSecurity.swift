package import Foundation

/// Where an OAuth request may go, by what it carries.
///
/// - A request that carries an OAuth secret (a client secret, an authorization code, a refresh
///   token, an assertion, an access or subject token: every token, device, revocation, IAM and STS
///   request) goes over https only, except to this machine, where plain http never crosses a
///   network (RFC 8252 section 8.3's loopback redirect, a local test issuer). The authorization and
///   verification pages, where the user signs in, follow the same rule.
/// - A request that carries no secret may also go over plain http to the one place its
///   ``PlaintextAllowance`` names: the Compute Engine metadata server (which serves only http,
///   and never leaves the VM's host), or exactly the URL a credential file names for a local
///   credential source (a cloud's instance metadata service).
///
/// A request "carries no secret" when it has no body and no `Authorization` or
/// `Proxy-Authorization` header; the check is made on the request itself, so a caller cannot
/// send a form or a bearer token in the clear by naming an allowance.
package enum EndpointSecurity {
    /// Whether `url` may carry OAuth secrets: `https`, or `http` to a loopback host
    /// (`127.0.0.0/8` written as a dotted quad, `::1`, or `localhost`).
    package static func allows(_ url: URL) -> Bool {
        switch url.scheme?.lowercased() {
        case "https": return url.host.map { !$0.isEmpty } ?? false
        case "http": return url.host.map(isLoopback) ?? false
        default: return false
        }
    }

    /// Whether `host` names this machine: `localhost`, `::1` (bracketed or not), or an IPv4
    /// address `127.a.b.c`. Shorthands the resolver would also take (`127.1`) are not
    /// recognized, which only ever errs on the side of refusing.
    package static func isLoopback(_ host: String) -> Bool {
        let host = host.lowercased()
        if host == "localhost" || host == "::1" || host == "[::1]" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets[0] == "127" else { return false }
        return octets.allSatisfy { octet in
            !octet.isEmpty && octet.count <= 3 && octet.allSatisfy(\.isASCII) && octet.allSatisfy(\.isNumber)
                && Int(octet).map { $0 <= 255 } == true
        }
    }

    /// Whether `request` carries a secret: a body (every OAuth form and IAM or STS request has
    /// one), or an `Authorization` or `Proxy-Authorization` header.
    package static func carriesSecret(_ request: OAuthHTTPRequest) -> Bool {
        if let body = request.body, !body.isEmpty { return true }
        return request.headers.contains { header in
            let name = header.name.lowercased()
            return name == "authorization" || name == "proxy-authorization"
        }
    }

    /// Whether `request` may be sent to its URL: https (or http on loopback) always; plain http
    /// elsewhere only when `allowance` names the URL and the request carries no secret.
    package static func allows(_ request: OAuthHTTPRequest, plaintext allowance: PlaintextAllowance = .none) -> Bool {
        allows(request.url) || (allowance.allows(request.url) && !carriesSecret(request))
    }

    /// Throws unless `url` may carry OAuth secrets.
    ///
    /// - Parameter role: What the URL is, for the message ("the token endpoint").
    /// - Throws: ``OAuthError/Kind/invalidConfiguration`` naming the role and the URL (without its
    ///   query), before anything is sent.
    static func require(_ url: URL, for role: String) throws(OAuthError) {
        guard !allows(url) else { return }
        throw OAuthError(
            .invalidConfiguration,
            "refusing \(role) \(url.redacted): OAuth endpoints must use https (plain http is allowed on loopback addresses only)"
        )
    }

    /// Throws unless `request` may be sent (``allows(_:plaintext:)``).
    ///
    /// - Parameter role: What the URL is, for the message ("the metadata token endpoint").
    /// - Throws: ``OAuthError/Kind/invalidConfiguration`` naming the role and the URL (without its
    ///   query) and saying why, before anything is sent.
    package static func require(
        _ request: OAuthHTTPRequest,
        plaintext allowance: PlaintextAllowance,
        for role: String
    )
        throws(OAuthError)
    {
        guard !allows(request, plaintext: allowance) else { return }
        let url = request.url.redacted
        if allowance.allows(request.url) {
            throw OAuthError(
                .invalidConfiguration,
                "refusing \(role) \(url): the request carries a secret (a body or an Authorization header), and secrets go over https only"
            )
        }
        var rule = "plain http is allowed on loopback addresses only"
        if let place = allowance.place { rule += ", and without secrets to \(place)" }
        throw OAuthError(.invalidConfiguration, "refusing \(role) \(url): OAuth endpoints must use https (\(rule))")
    }
}

/// Where a request that carries no secret may go over plain http, beyond loopback: given per
/// request by the code that builds it, never by a server's answer.
///
/// ``EndpointSecurity`` uses it only for requests without a body or an `Authorization` header,
/// so naming an allowance never lets a secret travel in the clear.
package struct PlaintextAllowance: Sendable, Hashable, CustomStringConvertible {
    enum Wrapped: Sendable, Hashable {
        case none
        case metadataServer(configuredAuthority: String?)
        case exactURL(URL)
    }

    let wrapped: Wrapped

    private init(_ wrapped: Wrapped) {
        self.wrapped = wrapped
    }

    /// No plain http off loopback: what every request that carries a secret gets.
    package static let none = Self(.none)

    /// The names of the Compute Engine metadata server on every Google VM: its DNS name and its
    /// link-local address.
    package static let metadataServerNames: Set<String> = ["metadata.google.internal", "169.254.169.254"]

    /// The Compute Engine metadata server: `metadata.google.internal` or `169.254.169.254` on
    /// port 80, or exactly `configuredAuthority` (`HOST[:PORT]`, what `GCE_METADATA_HOST` says,
    /// port 80 when it names none).
    package static func metadataServer(configuredAuthority: String?) -> Self {
        Self(.metadataServer(configuredAuthority: configuredAuthority?.lowercased()))
    }

    /// Exactly `url` (scheme http, host, port and path; any query): a local credential source a
    /// credential file names, such as a cloud's instance metadata service.
    package static func exactly(_ url: URL) -> Self {
        Self(.exactURL(url))
    }

    /// Whether an http request to `url` falls under this allowance.
    package func allows(_ url: URL) -> Bool {
        guard url.scheme?.lowercased() == "http", let host = url.host?.lowercased(), !host.isEmpty,
            url.user == nil, url.password == nil
        else { return false }
        let port = url.port ?? 80
        switch wrapped {
        case .none:
            return false
        case .metadataServer(let configured):
            if port == 80, Self.metadataServerNames.contains(host) { return true }
            guard let configured, let (configuredHost, configuredPort) = Self.split(authority: configured) else {
                return false
            }
            return host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")) == configuredHost
                && port == configuredPort
        case .exactURL(let allowed):
            return allowed.scheme?.lowercased() == "http" && allowed.host?.lowercased() == host
                && (allowed.port ?? 80) == port && Self.path(of: allowed) == Self.path(of: url)
        }
    }

    /// The place named, for messages; `nil` for ``none``.
    var place: String? {
        switch wrapped {
        case .none: return nil
        case .metadataServer(let configured):
            return "the metadata server (\(Self.metadataServerNames.sorted().joined(separator: ", "))"
                + (configured.map { ", or \($0) as configured" } ?? "") + ")"
        case .exactURL(let url): return "exactly \(url.redacted)"
        }
    }

    /// The place named, or `no plain http`.
    package var description: String { place ?? "no plain http" }

    /// `HOST[:PORT]` as a lowercased host without brackets and a port (80 when absent).
    private static func split(authority: String) -> (String, Int)? {
        guard let url = URL(string: "http://\(authority)/"), let host = url.host, !host.isEmpty else { return nil }
        return (host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]")), url.port ?? 80)
    }

    private static func path(of url: URL) -> String {
        let path = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? ""
        return path.isEmpty ? "/" : path
    }
}
