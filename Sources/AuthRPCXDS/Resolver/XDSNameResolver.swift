package import AuthRPC
package import AuthRPCTransport

/// The `xds` scheme's resolver for one channel: follows the target's listener to its route
/// configuration, the virtual host matching the name, the cluster its routes send calls to and
/// that cluster's endpoints, all from its own ADS client, and gives the channel the addresses of
/// the cluster's first priority that has endpoints (the channel spreads calls over them round
/// robin).
///
/// Not yet: per-call route matching (a virtual host whose routes name more than one cluster is
/// refused), locality weights, and priority failover by connectivity.
final class XDSNameResolver: ChannelResolver {
    let name: String
    let client: XDSADSClient
    /// How long one resolution may wait for the control plane (past the does-not-exist timer).
    let patience: Duration

    init(name: String, settings: XDSADSClient.Settings) {
        self.name = name
        self.client = XDSADSClient(settings: settings)
        self.patience = settings.doesNotExistTimeout + .seconds(10)
        Self.remember(self)
    }

    deinit {
        Self.forget(ObjectIdentifier(self))
        let client = self.client
        Task { await client.stop() }
    }

    func resolve() async -> Result<[SocketAddress], TransportFailure> {
        await client.start()
        let deadline = ContinuousClock.now + patience
        while true {
            switch await step() {
            case .addresses(let addresses):
                return .success(addresses)
            case .failed(let reason):
                return .failure(.resolutionFailed(host: name, reason: reason))
            case .waiting(let what):
                // The ADS client has asked; its answer, or its does-not-exist timer, comes.
                guard ContinuousClock.now < deadline, (try? await Task.sleep(for: .milliseconds(20))) != nil else {
                    return .failure(
                        .resolutionFailed(host: name, reason: "no answer from the control plane for \(what)")
                    )
                }
            }
        }
    }

    private enum Step {
        case addresses([SocketAddress])
        case failed(String)
        case waiting(String)
    }

    /// One walk down the chain, subscribing to what it needs next.
    private func step() async -> Step {
        await client.subscribe(.listener, name)
        guard let listenerEntry = await client.entry(.listener, name) else { return .waiting("listener '\(name)'") }
        guard case .listener(let listener)? = listenerEntry.resource else {
            return .failed("the control plane has no listener '\(name)'")
        }
        let routes: XDSRouteConfiguration
        switch listener.routes {
        case .inline(let inline):
            routes = inline
        case .rds(let routesName):
            await client.subscribe(.routeConfiguration, routesName)
            guard let entry = await client.entry(.routeConfiguration, routesName) else {
                return .waiting("route configuration '\(routesName)'")
            }
            guard case .routeConfiguration(let found)? = entry.resource else {
                return .failed("the control plane has no route configuration '\(routesName)'")
            }
            routes = found
        }
        guard let host = routes.virtualHost(for: name) else {
            return .failed("no virtual host of route configuration '\(routes.name)' matches '\(name)'")
        }
        var clusters: Set<String> = []
        for route in host.routes {
            switch route.action {
            case .cluster(let cluster): clusters.insert(cluster)
            case .weightedClusters(let weighted): clusters.formUnion(weighted.map(\.name))
            case .unsupported: break
            }
        }
        guard clusters.count == 1, let clusterName = clusters.first else {
            return .failed(
                "virtual host '\(host.name)' routes to \(clusters.count) clusters; "
                    + "per-call route matching is not supported yet (one cluster is)"
            )
        }
        await client.subscribe(.cluster, clusterName)
        guard let clusterEntry = await client.entry(.cluster, clusterName) else {
            return .waiting("cluster '\(clusterName)'")
        }
        guard case .cluster(let cluster)? = clusterEntry.resource else {
            return .failed("the control plane has no cluster '\(clusterName)'")
        }
        await client.subscribe(.endpoints, cluster.endpointsName)
        guard let endpointsEntry = await client.entry(.endpoints, cluster.endpointsName) else {
            return .waiting("endpoints '\(cluster.endpointsName)'")
        }
        guard case .endpoints(let endpoints)? = endpointsEntry.resource else {
            return .failed("the control plane has no endpoints '\(cluster.endpointsName)'")
        }
        guard let localities = endpoints.priorities.first(where: { $0.contains { !$0.endpoints.isEmpty } }) else {
            return .failed("cluster '\(clusterName)' has no endpoints")
        }
        var addresses: [SocketAddress] = []
        for endpoint in localities.flatMap(\.endpoints) {
            guard let address = try? SocketAddress(ipAddress: endpoint.host, port: endpoint.port) else {
                return .failed("endpoint '\(endpoint.host)' of cluster '\(clusterName)' is not an IP address")
            }
            addresses.append(address)
        }
        return .addresses(addresses)
    }
}
