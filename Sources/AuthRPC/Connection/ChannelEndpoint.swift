import AuthRPCTransport

/// One place a subchannel may connect to: an address (looked up, or given by the target), or a
/// target an HTTP CONNECT proxy tunnels to (`CONNECT host:port`; the proxy resolves a name).
///
/// Round-robin has a subchannel, so a connection and a tunnel, per endpoint: through a proxy, a
/// named target is one endpoint (the channel cannot see the addresses behind the proxy), an
/// `ipv4:`/`ipv6:` list one per address.
enum ChannelEndpoint: Sendable, Hashable, CustomStringConvertible {
    case address(SocketAddress)
    case proxied(ProxyServer, target: HostAndPort)

    /// `127.0.0.1:443`, `unix:/run/app.sock`, or `host:443 via http://proxy:3128`.
    var description: String {
        switch self {
        case .address(let address): return address.description
        case .proxied(let proxy, let target): return "\(target) via \(proxy)"
        }
    }
}

extension ConnectionRoute {
    /// How a subchannel connects to `endpoints`: adjacent addresses together, by Happy Eyeballs
    /// (pick-first's whole list when no proxy takes part); a proxied target by its own tunnel;
    /// several of these in turn.
    init(_ endpoints: [ChannelEndpoint]) {
        var routes: [ConnectionRoute] = []
        for endpoint in endpoints {
            switch endpoint {
            case .address(let address):
                if case .addresses(let previous) = routes.last {
                    routes[routes.count - 1] = .addresses(previous + [address])
                } else {
                    routes.append(.addresses([address]))
                }
            case .proxied(let proxy, let target):
                routes.append(.proxy(proxy, target: target))
            }
        }
        self = routes.count == 1 ? routes[0] : .inTurn(routes)
    }
}
