package import Foundation

/// Where OAuth secrets may go. Token, device, revocation and discovery requests carry client
/// secrets, codes, refresh tokens and access tokens, and the authorization and verification pages
/// are where the user signs in: all of them use https, except on this machine, where plain http
/// never crosses a network (RFC 8252 section 8.3's loopback redirect, a local test issuer).
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
}
