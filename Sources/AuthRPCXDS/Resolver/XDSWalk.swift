internal import AuthRPC
internal import AuthRPCTransport

/// Walks down what an ADS client holds, subscribing to what the walk needs next: from a
/// listener to the virtual host of a name, and from a cluster to its endpoints, placed by
/// priority and locality.
enum XDSWalk {
    /// Where one walk got.
    enum Step<Value: Sendable>: Sendable {
        case done(Value)
        /// The control plane's answer rules it out (a resource that does not exist, say).
        case failed(String)
        /// The client has asked for `what`; its answer, or its does-not-exist timer, comes.
        case waiting(String)
    }

    /// Where a walk ended once it was done waiting.
    enum Outcome<Value: Sendable>: Sendable {
        case value(Value)
        case failed(String)
    }

    /// The virtual host a listener's routes give `name`, and the cluster its first route to one
    /// names (the channel's own connections go there).
    static func virtualHost(_ name: String, _ client: XDSADSClient) async -> Step<XDSRoutes> {
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
        let primary = host.routes.lazy.compactMap { route -> String? in
            switch route.action {
            case .cluster(let cluster): return cluster
            case .weightedClusters(let weighted): return weighted.first?.name
            case .unsupported: return nil
            }
        }.first
        guard let primary else { return .failed("no route of virtual host '\(host.name)' names a cluster") }
        return .done(XDSRoutes(host: host, primaryCluster: primary, routeConfigurationName: listener.routes.rdsName))
    }

    /// Cluster `name`'s endpoints, placed by priority and locality (gRFC A27): priorities without
    /// an endpoint are left out, and the others numbered from 0 in order.
    static func resolution(ofCluster name: String, _ client: XDSADSClient) async -> Step<ChannelResolution> {
        await client.subscribe(.cluster, name)
        guard let clusterEntry = await client.entry(.cluster, name) else { return .waiting("cluster '\(name)'") }
        guard case .cluster(let cluster)? = clusterEntry.resource else {
            return .failed("the control plane has no cluster '\(name)'")
        }
        await client.subscribe(.endpoints, cluster.endpointsName)
        guard let endpointsEntry = await client.entry(.endpoints, cluster.endpointsName) else {
            return .waiting("endpoints '\(cluster.endpointsName)'")
        }
        guard case .endpoints(let endpoints)? = endpointsEntry.resource else {
            return .failed("the control plane has no endpoints '\(cluster.endpointsName)'")
        }
        var placed: [(address: SocketAddress, placement: ChannelResolution.Placement)] = []
        var priority = 0
        var locality = 0
        for localities in endpoints.priorities where localities.contains(where: { !$0.endpoints.isEmpty }) {
            for entry in localities where !entry.endpoints.isEmpty {
                let placement = ChannelResolution.Placement(
                    priority: priority,
                    locality: locality,
                    weight: entry.weight
                )
                for endpoint in entry.endpoints {
                    guard let address = try? SocketAddress(ipAddress: endpoint.host, port: endpoint.port) else {
                        return .failed("endpoint '\(endpoint.host)' of cluster '\(name)' is not an IP address")
                    }
                    placed.append((address, placement))
                }
                locality += 1
            }
            priority += 1
        }
        guard !placed.isEmpty else { return .failed("cluster '\(name)' has no endpoints") }
        return .done(ChannelResolution(placed: placed))
    }

    /// Walks with `step` until it is done or failed, looking again every 20 ms while it waits,
    /// for at most `patience` (longer than the does-not-exist timer, which ends every wait for a
    /// resource the control plane never sends) or until the task is cancelled.
    static func settle<Value: Sendable>(
        patience: Duration,
        _ step: () async -> Step<Value>
    ) async -> Outcome<Value> {
        let deadline = ContinuousClock.now + patience
        while true {
            switch await step() {
            case .done(let value):
                return .value(value)
            case .failed(let reason):
                return .failed(reason)
            case .waiting(let what):
                guard ContinuousClock.now < deadline, (try? await Task.sleep(for: .milliseconds(20))) != nil else {
                    return .failed("no answer from the control plane for \(what)")
                }
            }
        }
    }
}

/// A name's virtual host, and the cluster the channel's own connections serve.
struct XDSRoutes: Sendable, Hashable {
    let host: XDSVirtualHost
    let primaryCluster: String
    /// The route configuration the listener names (RDS); nil when it holds its routes inline.
    let routeConfigurationName: String?

    /// Every cluster a route sends calls to.
    var clusters: Set<String> {
        var names: Set<String> = []
        for route in host.routes {
            switch route.action {
            case .cluster(let cluster): names.insert(cluster)
            case .weightedClusters(let weighted): names.formUnion(weighted.map(\.name))
            case .unsupported: break
            }
        }
        return names
    }
}
