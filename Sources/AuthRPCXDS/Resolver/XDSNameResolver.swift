internal import AuthRPC
internal import AuthRPCSystem
internal import AuthRPCTransport

/// The `xds` scheme's resolver for one channel: follows the target's listener to its route
/// configuration and the virtual host matching the name, all from its own ADS client.
///
/// Each call is routed by the virtual host's routes (gRFC A28: path, headers, fraction; a
/// cluster or a weighted pick among several; A31's `max_stream_duration` capping its deadline).
/// The channel's own connections serve the first cluster the routes name (``resolve()`` gives
/// its endpoints); each other cluster gets connections of its own (``XDSClusterResolver``). Every
/// change the control plane sends makes the channel resolve again at once.
///
/// Each cluster's endpoints go to its connections placed by priority and locality: the channel
/// fails over between priorities by connectivity and picks localities by weight (gRFC A27).
final class XDSNameResolver: ChannelResolver, ChannelCallRouter {
    /// What the routes are known to be.
    fileprivate enum Known {
        case unknown
        case routes(XDSRoutes)
        case failed(String)
    }

    private struct RouteState {
        var known = Known.unknown {
            didSet { everyCall = known.everyCall }
        }
        /// Where every call goes when the routes send them all to one place: routing a call then
        /// reads no routes.
        private(set) var everyCall: ChannelCallRoute?
        /// Each walk's number, and the latest one whose result was kept: a walk that started
        /// before another one finished never overwrites it.
        var walksStarted = 0
        var walkKept = 0
    }

    let name: String
    let client: XDSADSClient
    /// How long one resolution may wait for the control plane (past the does-not-exist timer).
    let patience: Duration
    private let state = Locked(RouteState())
    private let observerKeys = Locked<[Int]>([])
    /// Told after the routes changed (the channel closes the clusters they no longer name).
    private let routeObservers = XDSChangeObservers()

    init(name: String, settings: XDSADSClient.Settings) {
        self.name = name
        self.client = XDSADSClient(settings: settings)
        self.patience = settings.doesNotExistTimeout + .seconds(10)
        let key = client.changes.add { [weak self] in
            guard let self else { return }
            Task { await self.walkRoutes() }
        }
        observerKeys.withLock { $0.append(key) }
        Self.remember(self)
    }

    deinit {
        Self.forget(ObjectIdentifier(self))
        for key in observerKeys.withLock({ $0 }) { client.changes.remove(key) }
        close()
    }

    var callRouter: (any ChannelCallRouter)? { self }

    func close() {
        let client = self.client
        Task { await client.stop() }
    }

    func shutdown() async {
        await client.shutdown()
    }

    var openConnectionCount: Int { client.connections.count }

    func observeChanges(_ changed: @escaping @Sendable () -> Void) {
        let key = client.changes.add(changed)
        observerKeys.withLock { $0.append(key) }
    }

    /// The endpoints of the first cluster the routes name, placed by priority and locality.
    func resolve() async -> Result<ChannelResolution, TransportFailure> {
        await client.start()
        let outcome = await XDSWalk.settle(patience: patience) { () async -> XDSWalk.Step<ChannelResolution> in
            switch await walkRoutes() {
            case .done(let routes): return await XDSWalk.resolution(ofCluster: routes.primaryCluster, client)
            case .failed(let reason): return .failed(reason)
            case .waiting(let what): return .waiting(what)
            }
        }
        switch outcome {
        case .value(let resolution): return .success(resolution)
        case .failed(let reason): return .failure(.resolutionFailed(host: name, reason: reason))
        }
    }

    // MARK: - Routing calls

    func route(path: String, metadata: Metadata, roll: UInt64) -> ChannelCallRoute {
        if let everyCall = state.withLock({ $0.everyCall }) { return everyCall }
        let routes: XDSRoutes
        switch state.withLock({ $0.known }) {
        case .unknown: return .pending
        case .failed(let reason): return .unavailable(reason)
        case .routes(let known): routes = known
        }
        var random = SplitMix64(seed: roll)
        let decision = XDSCallRouting.decide(
            routes.host,
            path: path,
            headerValues: { metadata.strings(forKey: $0) },
            using: &random
        )
        switch decision {
        case .cluster(let cluster, let maxStreamDuration):
            return cluster == routes.primaryCluster
                ? .channel(maxDuration: maxStreamDuration) : .group(cluster, maxDuration: maxStreamDuration)
        case .unavailable(let reason):
            return .unavailable(reason)
        }
    }

    func routesKnown() async {
        await client.start()
        let outcome = await XDSWalk.settle(patience: patience) { await walkRoutes() }
        if case .failed(let reason) = outcome {
            state.withLock { state in
                if case .unknown = state.known { state.known = .failed(reason) }
            }
        }
    }

    func resolver(forGroup name: String) -> any ChannelResolver {
        XDSClusterResolver(
            cluster: name,
            client: client,
            patience: patience,
            isRouted: { [weak self] in self?.routes(toGroup: name) ?? false },
            prune: { [weak self] in await self?.pruneSubscriptions() }
        )
    }

    func observeRouteChanges(_ changed: @escaping @Sendable () -> Void) {
        _ = routeObservers.add(changed)
    }

    func routes(toGroup name: String) -> Bool {
        guard case .routes(let routes) = state.withLock({ $0.known }) else { return true }
        return routes.clusters.contains(name)
    }

    /// Walks to the virtual host and keeps what the walk found, unless a later walk already
    /// kept its own. While a walk waits (a new route configuration not sent yet), the routes
    /// known before stay in use.
    @discardableResult
    private func walkRoutes() async -> XDSWalk.Step<XDSRoutes> {
        let number = state.withLock { state in
            state.walksStarted += 1
            return state.walksStarted
        }
        let step = await XDSWalk.virtualHost(name, client)
        let changed = state.withLock { state -> Bool in
            guard number > state.walkKept else { return false }
            let before = state.known
            switch step {
            case .done(let routes):
                state.known = .routes(routes)
            case .failed(let reason):
                state.known = .failed(reason)
            case .waiting:
                return false
            }
            state.walkKept = number
            if case .routes(let old) = before, case .routes(let new) = state.known { return old != new }
            return true
        }
        if changed {
            await pruneSubscriptions()
            routeObservers.notify()
        }
        return step
    }

    /// Asks the control plane to stop sending what the routes known now do not need. (A group's
    /// walk that subscribed while the routes moved on calls it again; the routes are always
    /// updated before this runs, so whichever comes last sees them.)
    private func pruneSubscriptions() async {
        guard case .routes(let routes) = state.withLock({ $0.known }) else { return }
        await client.retainOnly(routeConfiguration: routes.routeConfigurationName, clusters: routes.clusters)
    }
}

extension XDSNameResolver.Known {
    /// Where every call goes, when the first route takes every call (``XDSRouteMatch/takesEveryCall``)
    /// and names one cluster; nil when calls must be routed one by one.
    fileprivate var everyCall: ChannelCallRoute? {
        guard case .routes(let routes) = self, let first = routes.host.routes.first, first.match.takesEveryCall,
            case .cluster(let cluster) = first.action
        else { return nil }
        return cluster == routes.primaryCluster
            ? .channel(maxDuration: first.maxStreamDuration) : .group(cluster, maxDuration: first.maxStreamDuration)
    }
}
