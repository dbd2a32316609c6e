package import Foundation

/// Hosts of metadata servers: services a cloud runs for each machine at a link-local address (or
/// a name for one) that serve only plain http and that no network between carries. OAuth2 has
/// the mechanism and no names: the code that knows a cloud (GoogleAuth) says which hosts these are.
///
/// For a request whose ``PlaintextAllowance`` names them, a metadata host is:
/// - **never proxied** (``HTTP1OAuthTransport`` connects directly: a proxy cannot reach the
///   machine's own metadata server, and must not see what it serves);
/// - **allowed over plain http** for a request without a body or an `Authorization` header
///   (``EndpointSecurity``), on the port named (80 unless one is given).
package struct MetadataHosts: Sendable, Hashable, CustomStringConvertible {
    /// Each host (lower case, IPv6 without brackets, no trailing dot) with its port.
    private let entries: Set<Entry>

    private struct Entry: Sendable, Hashable {
        let host: String
        let port: Int
    }

    /// The hosts of `authorities`, each `HOST`, `HOST:PORT` or `[IPv6]:PORT` (port 80 when none is
    /// given); one that cannot be read as an authority is left out.
    package init(_ authorities: [String]) {
        entries = Set(authorities.compactMap(Self.entry(ofAuthority:)))
    }

    /// Whether `host`, whatever the port, is one of these (its case, brackets and a trailing dot
    /// aside): such a host is never reached through a proxy.
    package func contains(host: String) -> Bool {
        let name = Self.normalized(host)
        return entries.contains { $0.host == name }
    }

    /// Whether `url` is plain http to one of these hosts on its port, without user information.
    package func contains(_ url: URL) -> Bool {
        guard url.scheme?.lowercased() == "http", let host = url.host, !host.isEmpty,
            url.user == nil, url.password == nil
        else { return false }
        return entries.contains(Entry(host: Self.normalized(host), port: url.port ?? 80))
    }

    /// The hosts, sorted, with their port when it is not 80: for messages.
    package var description: String {
        entries.map { entry in
            let host = entry.host.contains(":") ? "[\(entry.host)]" : entry.host
            return entry.port == 80 ? host : "\(host):\(entry.port)"
        }
        .sorted().joined(separator: ", ")
    }

    private static func normalized(_ host: String) -> String {
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name.hasSuffix(".") { name.removeLast() }
        return name
    }

    private static func entry(ofAuthority authority: String) -> Entry? {
        var text = authority.trimmingCharacters(in: .whitespaces)
        // A bare IPv6 address (`fd00:ec2::254`) is a host without a port.
        if !text.hasPrefix("["), text.filter({ $0 == ":" }).count > 1 { text = "[\(text)]" }
        guard !text.isEmpty, let url = URL(string: "http://\(text)/"), let host = url.host, !host.isEmpty,
            url.user == nil, url.path == "/" || url.path.isEmpty
        else { return nil }
        let port = url.port ?? 80
        guard (1...65535).contains(port) else { return nil }
        return Entry(host: normalized(host), port: port)
    }
}
