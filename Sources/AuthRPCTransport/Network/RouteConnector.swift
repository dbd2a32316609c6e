/// Opens the socket a route describes, on the calling thread: the target's addresses (resolved
/// now), the given ones, or a tunnel through a proxy (its name resolved now, then CONNECT). The
/// same code for HTTP/2 connections and HTTP/1.1 exchanges, so both reach servers alike.
enum RouteConnector {
    /// The connected socket, and the bytes a proxy sent after its answer (the server's first
    /// bytes, through the tunnel), which belong to the protocol that runs next.
    ///
    /// - Throws: What connecting failed with; the socket, if one was made, is closed.
    static func open(
        _ route: ConnectionRoute,
        deadline: ContinuousClock.Instant,
        abortFD: Int32
    ) throws(TransportFailure) -> (socket: StreamSocket, tunnelBytes: [UInt8]) {
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
        case .inTurn(let routes):
            var failures: [TransportFailure] = []
            for next in routes {
                do throws(TransportFailure) {
                    return try open(next, deadline: deadline, abortFD: abortFD)
                } catch {
                    // Abandoned (the connection is closing), or out of time: no route may start.
                    if case .connectFailed(_, _, .abandoned) = error { throw error }
                    failures.append(error)
                    if ContinuousClock.now >= deadline { break }
                }
            }
            throw inTurnFailure(failures, route: route)
        case .proxy(let proxy, let target):
            // The proxy's name is resolved here; the target's is the proxy's business.
            let addresses: [SocketAddress]
            do throws(TransportFailure) {
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
            do throws(TransportFailure) {
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

    /// Every route of `.inTurn` failed: one error naming each destination and why. A proxy's
    /// refusal of every tunnel stays `proxyFailed`; otherwise the kind is refused only when each
    /// route was.
    private static func inTurnFailure(_ failures: [TransportFailure], route: ConnectionRoute) -> TransportFailure {
        guard failures.count > 1 else {
            return failures.first ?? .invalidAddress("no address to connect to")
        }
        var proxy: String?
        var tunnelTargets: [String] = []
        var refused = true
        let reasons = failures.map { error -> String in
            switch error {
            case .proxyFailed(let name, let target, let reason):
                proxy = name
                tunnelTargets.append(target)
                refused = false
                return "\(target): \(reason)"
            case .connectFailed(let target, let reason, let kind):
                refused = refused && kind == .refused
                return "\(target): \(reason)"
            default:
                refused = false
                return error.description
            }
        }
        if let proxy, tunnelTargets.count == failures.count {
            return .proxyFailed(
                proxy: proxy,
                target: tunnelTargets.joined(separator: " or "),
                reason: reasons.joined(separator: "; ")
            )
        }
        return .connectFailed(
            target: route.description,
            reason: reasons.joined(separator: "; "),
            kind: refused ? .refused : .other
        )
    }
}
