import AuthRPCTransport

/// A channel's target, parsed as gRPC names targets (doc/naming.md):
///
/// - `host:port`, `[ipv6]:port` or `host` (port 443), the same as `dns:///host:port` or
///   `dns:host:port`: a name the system's resolver (getaddrinfo: DNS, /etc/hosts) turns into
///   addresses, looked up again as the channel runs;
/// - `ipv4:addr[:port][,addr[:port],...]` and `ipv6:addr`, `ipv6:[addr]:port`, ...: addresses
///   given in full;
/// - `unix:path` (relative or absolute), `unix:///absolute/path`, and on Linux
///   `unix-abstract:name`: a unix-domain socket, the path or name taken as written.
///
/// Anything else (another scheme, a DNS server in the authority, a bad address, a unix path
/// longer than `sun_path`, an empty list) is an `invalidArgument` naming what is wrong.
struct ChannelTarget: Sendable, CustomStringConvertible {
    enum Endpoint: Sendable, Equatable {
        /// A name to look up.
        case name(HostAndPort)
        /// Addresses the target gave in full, in its order.
        case addresses([SocketAddress])
        /// Addresses a registered resolver gives (``ChannelResolvers``).
        case resolver(any ChannelResolver)

        static func == (lhs: Endpoint, rhs: Endpoint) -> Bool {
            switch (lhs, rhs) {
            case (.name(let a), .name(let b)): return a == b
            case (.addresses(let a), .addresses(let b)): return a == b
            case (.resolver(let a), .resolver(let b)): return a === b
            default: return false
            }
        }
    }

    let endpoint: Endpoint
    /// The registered scheme's resolver that gives the addresses, if one does.
    var registeredResolver: (any ChannelResolver)? {
        if case .resolver(let resolver) = endpoint { return resolver }
        return nil
    }

    /// Whether a registered resolver gives the addresses (calls then go round robin).
    var isResolvedByRegisteredScheme: Bool { registeredResolver != nil }

    /// `host:port` for a name, else the target as written.
    let description: String
    /// The default `:authority`: `host:port` for a name, the first address for an address
    /// list, `localhost` for a unix socket (as gRPC C-core).
    let authority: String
    /// The name TLS verifies and sends (SNI) unless overridden: the authority's host.
    let serverName: String
    /// An `ipv4:`/`ipv6:` list's entries as written (host and port), in the order of
    /// `endpoint`'s addresses: what a proxy's `CONNECT` names. Empty for the other forms.
    let ipTargets: [HostAndPort]

    /// The schemes a target may name.
    static let schemes = ["dns", "ipv4", "ipv6", "unix", "unix-abstract"]

    init(parsing text: String) throws(RPCError) {
        func invalid(_ reason: String) -> RPCError {
            // Control characters shown as '?', so the message stays one printable line.
            let shown = String(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) })
            return RPCError(code: .invalidArgument, message: "invalid target '\(shown)': \(reason)")
        }
        guard !text.hasPrefix("["), let colon = text.firstIndex(of: ":") else {
            try self.init(name: try Self.hostAndPort(Substring(text), invalid))
            return
        }
        let scheme = text[..<colon].lowercased()
        let rest = text[text.index(after: colon)...]
        switch scheme {
        case "dns":
            var name = rest
            if name.hasPrefix("//") {
                let authorityAndPath = name.dropFirst(2)
                guard let slash = authorityAndPath.firstIndex(of: "/") else {
                    throw invalid("expected dns:///host:port")
                }
                let server = authorityAndPath[..<slash]
                guard server.isEmpty else {
                    throw invalid(
                        "a DNS server in the target ('\(server)') is not supported; the system's resolver is used: "
                            + "write dns:///\(authorityAndPath[authorityAndPath.index(after: slash)...])"
                    )
                }
                name = authorityAndPath[authorityAndPath.index(after: slash)...]
            }
            try self.init(name: try Self.hostAndPort(name, invalid))
        case "ipv4", "ipv6":
            let list = rest.split(separator: ",", omittingEmptySubsequences: false)
            guard !rest.isEmpty, !list.contains(where: \.isEmpty) else {
                throw invalid("the address list is empty or has an empty entry")
            }
            var addresses: [SocketAddress] = []
            var written: [HostAndPort] = []
            for entry in list {
                let family = scheme == "ipv4" ? "IPv4" : "IPv6"
                let (host, port) =
                    scheme == "ipv4" ? try Self.ipv4Entry(entry, invalid) : try Self.ipv6Entry(entry, invalid)
                // An IPv6 address has colons, an IPv4 one none.
                guard host.contains(":") == (scheme == "ipv6"),
                    let address = try? SocketAddress(ipAddress: String(host), port: port)
                else {
                    throw invalid("'\(host)' is not an \(family) address")
                }
                addresses.append(address)
                written.append(HostAndPort(host: String(host), port: port))
            }
            self.init(
                endpoint: .addresses(addresses),
                description: text,
                authority: written[0].description,
                serverName: written[0].host,
                ipTargets: written
            )
        case "unix", "unix-abstract":
            var path = rest
            if scheme == "unix", path.hasPrefix("//") {
                // unix:///absolute/path: the authority between "//" and the path must be empty.
                guard path.dropFirst(2).hasPrefix("/") else {
                    throw invalid("expected unix:///absolute/path (or unix:path)")
                }
                path = path.dropFirst(2)
            }
            let address: SocketAddress
            do throws(TransportFailure) {
                address =
                    scheme == "unix"
                    ? try SocketAddress(unixPath: String(path)) : try SocketAddress(abstractUnixName: String(path))
            } catch {
                if case .invalidAddress(let reason) = error { throw invalid(reason) }
                throw invalid(error.description)
            }
            self.init(
                endpoint: .addresses([address]),
                description: text,
                authority: "localhost",
                serverName: "localhost",
                ipTargets: []
            )
        default:
            if let factory = ChannelResolvers.factory(for: scheme) {
                let resolver = try factory(String(rest))
                // The authority is the name after `scheme:///` (gRFC A27: the listener's name).
                let name = rest.hasPrefix("///") ? String(rest.dropFirst(3)) : String(rest)
                self.init(
                    endpoint: .resolver(resolver),
                    description: text,
                    authority: name,
                    serverName: name,
                    ipTargets: []
                )
                return
            }
            // host:port, unless what precedes the colon can only be a scheme nobody knows.
            if rest.isEmpty || rest.allSatisfy(\.isASCIIDigit) || !Self.isScheme(scheme) {
                try self.init(name: try Self.hostAndPort(Substring(text), invalid))
                return
            }
            throw invalid(
                "unknown scheme '\(scheme)' (expected \(Self.schemes.joined(separator: ", ")), or host:port)"
            )
        }
    }

    private init(
        endpoint: Endpoint,
        description: String,
        authority: String,
        serverName: String,
        ipTargets: [HostAndPort]
    ) {
        self.endpoint = endpoint
        self.description = description
        self.authority = authority
        self.serverName = serverName
        self.ipTargets = ipTargets
    }

    private init(name: HostAndPort) throws(RPCError) {
        self.init(
            endpoint: .name(name),
            description: name.description,
            authority: name.description,
            serverName: name.host,
            ipTargets: []
        )
    }

    /// Where the channel's subchannels connect with `proxy` applied to each destination
    /// (``ProxySettings/usesProxy(host:port:)``: never a unix socket or this machine): nil for
    /// a name the channel looks up itself (no proxy for it); one proxied endpoint for a name the
    /// proxy looks up; for an address list, each address direct or through the proxy.
    func endpoints(through proxy: ProxySettings) -> [ChannelEndpoint]? {
        switch endpoint {
        case .name(let target):
            return proxy.proxy(for: target).map { [.proxied($0, target: target)] }
        case .addresses(let addresses):
            guard !ipTargets.isEmpty else { return addresses.map(ChannelEndpoint.address) }
            return zip(addresses, ipTargets).map { address, target in
                proxy.proxy(for: target).map { .proxied($0, target: target) } ?? .address(address)
            }
        case .resolver:
            // Resolved by the channel, each address direct.
            return nil
        }
    }

    /// The target of one group of a target that routes per call (``ChannelCallRouter``): the
    /// group's resolver, the same authority and server name.
    func group(_ name: String, resolvedBy resolver: any ChannelResolver) -> ChannelTarget {
        ChannelTarget(
            endpoint: .resolver(resolver),
            description: "\(description) (group '\(name)')",
            authority: authority,
            serverName: serverName,
            ipTargets: []
        )
    }

    /// RFC 3986: `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`.
    private static func isScheme(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, first.isASCIILetter else { return false }
        return text.unicodeScalars.allSatisfy {
            $0.isASCIILetter || $0.isASCIIDigit || "+-.".unicodeScalars.contains($0)
        }
    }

    /// `host:port`, `[ipv6]:port`, or a bare host (port 443).
    private static func hostAndPort(
        _ text: Substring,
        _ invalid: (String) -> RPCError
    ) throws(RPCError) -> HostAndPort {
        var host: Substring
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw invalid("missing ']' after the IPv6 address") }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.first == ":" else { throw invalid("expected ':' and a port after ']'") }
                portText = rest.dropFirst()
            }
        } else if let colon = text.lastIndex(of: ":") {
            guard text.firstIndex(of: ":") == colon else {
                throw invalid("put IPv6 addresses in brackets, as [::1]:443")
            }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        } else {
            host = text
        }
        guard !host.isEmpty else { throw invalid("the host is empty") }
        guard host.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "/" }) else {
            throw invalid("expected host:port")
        }
        if let problem = Authority.hostProblem(in: String(host)) { throw invalid(problem) }
        return HostAndPort(host: String(host), port: try port(portText, invalid))
    }

    /// `a.b.c.d` or `a.b.c.d:port`.
    private static func ipv4Entry(
        _ entry: Substring,
        _ invalid: (String) -> RPCError
    ) throws(RPCError) -> (Substring, Int) {
        guard let colon = entry.firstIndex(of: ":") else { return (entry, 443) }
        guard entry.lastIndex(of: ":") == colon else { return (entry, 443) }
        return (entry[..<colon], try port(entry[entry.index(after: colon)...], invalid))
    }

    /// `addr` (no port) or `[addr]:port` / `[addr]`.
    private static func ipv6Entry(
        _ entry: Substring,
        _ invalid: (String) -> RPCError
    ) throws(RPCError) -> (Substring, Int) {
        guard entry.hasPrefix("[") else { return (entry, 443) }
        guard let close = entry.firstIndex(of: "]") else { throw invalid("missing ']' after '\(entry)'") }
        let host = entry[entry.index(after: entry.startIndex)..<close]
        let rest = entry[entry.index(after: close)...]
        guard !rest.isEmpty else { return (host, 443) }
        guard rest.first == ":" else { throw invalid("expected ':' and a port after ']' in '\(entry)'") }
        return (host, try port(rest.dropFirst(), invalid))
    }

    /// A port from 1 to 65535; 443 when there is none.
    private static func port(_ text: Substring?, _ invalid: (String) -> RPCError) throws(RPCError) -> Int {
        guard let text else { return 443 }
        guard text.allSatisfy(\.isASCIIDigit), let value = Int(text), (1...65535).contains(value) else {
            throw invalid("the port must be a number from 1 to 65535")
        }
        return value
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

extension Unicode.Scalar {
    fileprivate var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
