/// Opens the socket a route describes, on the calling thread: the target's addresses (resolved
/// now), the given ones, or a tunnel through a proxy (its name resolved now, then CONNECT). The
/// same code for HTTP/2 connections and HTTP/1.1 exchanges, so both reach servers alike.
enum RouteConnector {
    /// The connected socket, and the bytes a proxy sent after its answer (the server's first
    /// bytes, through the tunnel), which belong to the protocol that runs next.
    ///
    /// - Throws: What connecting failed with; the socket, if one was made, is closed.
    static func open(
        _ route: HTTP2Route,
        deadline: ContinuousClock.Instant,
        abortFD: Int32
    ) throws(HTTP2Error) -> (socket: StreamSocket, tunnelBytes: [UInt8]) {
        switch route {
        case .resolving(let target):
            let addresses = try AddressResolver.resolve(target)
            let socket = try StreamSocket.connect(
                to: addresses,
                description: target.description,
                deadline: deadline,
                abortFD: abortFD
            )
            return (socket, [])
        case .addresses(let addresses):
            guard !addresses.isEmpty else { throw .invalidAddress("no address to connect to") }
            let socket = try StreamSocket.connect(
                to: addresses,
                description: route.description,
                deadline: deadline,
                abortFD: abortFD
            )
            return (socket, [])
        case .proxy(let proxy, let target):
            // The proxy's name is resolved here; the target's is the proxy's business.
            let addresses: [SocketAddress]
            do throws(HTTP2Error) {
                addresses = try AddressResolver.resolve(proxy.address)
            } catch {
                throw .proxyFailed(proxy: proxy.description, target: target.description, reason: error.description)
            }
            let socket = try StreamSocket.connect(
                to: addresses,
                description: "the HTTP proxy \(proxy.address) (for \(target))",
                deadline: deadline,
                abortFD: abortFD
            )
            do throws(HTTP2Error) {
                let tunnelBytes = try ProxyTunnel.open(
                    over: socket,
                    to: target,
                    proxy: proxy,
                    deadline: deadline,
                    abortFD: abortFD
                )
                return (socket, tunnelBytes)
            } catch {
                socket.closeSocket()
                throw error
            }
        }
    }
}
