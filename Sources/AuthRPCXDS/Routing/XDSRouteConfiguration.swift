/// A validated route configuration (RDS, or inline in a listener).
struct XDSRouteConfiguration: Sendable, Hashable {
    let name: String
    let virtualHosts: [XDSVirtualHost]

    /// The virtual host whose domains best match `host` (the target's name, scheme and leading
    /// `/` stripped), as gRFC A27 says: an exact domain before a suffix wildcard before a prefix
    /// wildcard before `*`, and within a kind the longest pattern; nil when none matches.
    func virtualHost(for host: String) -> XDSVirtualHost? {
        let lowered = host.lowercased()
        var best: (host: XDSVirtualHost, pattern: XDSDomainPattern)?
        for virtualHost in virtualHosts {
            for pattern in virtualHost.domains where pattern.matches(lowercasedHost: lowered) {
                if best == nil || pattern.isBetter(than: best!.pattern) {
                    best = (virtualHost, pattern)
                }
            }
        }
        return best?.host
    }
}
