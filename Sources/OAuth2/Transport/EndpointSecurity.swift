package import Foundation

/// Where an OAuth request may go, by what it carries.
///
/// - A request that carries an OAuth secret (a client secret, an authorization code, a refresh
///   token, an assertion, an access or subject token: every token, device, revocation, IAM and STS
///   request) goes over https only, except to this machine, where plain http never crosses a
///   network (RFC 8252 section 8.3's loopback redirect, a local test issuer). The authorization and
///   verification pages, where the user signs in, follow the same rule.
/// - A request that carries no secret may also go over plain http to the metadata servers its
///   ``PlaintextAllowance`` names (``MetadataHosts``: link-local services that serve only http
///   and never leave the machine's host). Which hosts those are is the caller's knowledge
///   (GoogleAuth names Google's and AWS's); this type has none.
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
/// so naming an allowance never lets a secret travel in the clear. The hosts it names are also
/// never proxied (``HTTP1OAuthTransport``).
package struct PlaintextAllowance: Sendable, Hashable, CustomStringConvertible {
    /// The metadata servers named; `nil` for ``none``.
    package let metadataHosts: MetadataHosts?

    private init(_ metadataHosts: MetadataHosts?) {
        self.metadataHosts = metadataHosts
    }

    /// No plain http off loopback: what every request that carries a secret gets.
    package static let none = Self(nil)

    /// The metadata servers `hosts` (link-local services of a cloud, on their ports).
    package static func metadataServers(_ hosts: MetadataHosts) -> Self {
        Self(hosts)
    }

    /// Whether an http request to `url` falls under this allowance.
    package func allows(_ url: URL) -> Bool {
        metadataHosts?.contains(url) ?? false
    }

    /// Whether a request to `host` must go directly, never through a proxy.
    package func neverProxies(host: String) -> Bool {
        metadataHosts?.contains(host: host) ?? false
    }

    /// The place named, for messages; `nil` for ``none``.
    var place: String? {
        metadataHosts.map { "the metadata server (\($0))" }
    }

    /// The place named, or `no plain http`.
    package var description: String { place ?? "no plain http" }
}
