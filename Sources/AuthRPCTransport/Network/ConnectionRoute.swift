/// How a connection reaches its server.
package enum ConnectionRoute: Sendable, Hashable, CustomStringConvertible {
    /// Resolve the target's host when connecting and try its addresses (Happy Eyeballs).
    case resolving(HostAndPort)
    /// Try these addresses (Happy Eyeballs): resolved already, or a unix-domain socket.
    case addresses([SocketAddress])
    /// Through an HTTP CONNECT proxy: resolve the proxy's host and connect to it, then ask it
    /// for a tunnel to `target`, whose name the proxy resolves. TLS, when configured, runs
    /// inside the tunnel, end to end with the target.
    case proxy(ProxyServer, target: HostAndPort)
    /// Each route in turn, until one connects, all within the one connect timeout (a channel's
    /// pick-first over a list whose addresses go through a proxy, each its own tunnel).
    indirect case inTurn([ConnectionRoute])

    /// `host:port`, the addresses, or `host:port via http://proxy:port` (routes in turn
    /// joined by ` or `); never credentials.
    package var description: String {
        switch self {
        case .resolving(let target):
            return target.description
        case .addresses(let addresses):
            return addresses.count == 1
                ? addresses[0].description : "[" + addresses.map(\.description).joined(separator: ", ") + "]"
        case .proxy(let proxy, let target):
            return "\(target) via \(proxy)"
        case .inTurn(let routes):
            return routes.map(\.description).joined(separator: " or ")
        }
    }
}
