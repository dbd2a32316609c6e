/// A virtual host: the domains it serves and its routes, in order (the first match wins).
struct XDSVirtualHost: Sendable, Hashable {
    let name: String
    let domains: [XDSDomainPattern]
    let routes: [XDSRoute]
}
