internal import AuthRPC
internal import AuthRPCSystem
internal import AuthRPCTransport

/// The endpoints of one cluster a channel's routes send calls to (other than the first, which
/// ``XDSNameResolver`` resolves), from the channel's ADS client: the cluster's endpoints placed by
/// priority and locality, resolved again whenever the control plane changes them.
final class XDSClusterResolver: ChannelResolver {
    let cluster: String
    let client: XDSADSClient
    /// How long one resolution may wait for the control plane (past the does-not-exist timer).
    let patience: Duration
    /// Whether the channel's routes still send calls to the cluster.
    private let isRouted: @Sendable () -> Bool
    /// Drops the subscriptions the channel's routes do not need (``XDSNameResolver``'s).
    private let prune: @Sendable () async -> Void
    private let observerKeys = Locked<[Int]>([])

    init(
        cluster: String,
        client: XDSADSClient,
        patience: Duration,
        isRouted: @escaping @Sendable () -> Bool,
        prune: @escaping @Sendable () async -> Void
    ) {
        self.cluster = cluster
        self.client = client
        self.patience = patience
        self.isRouted = isRouted
        self.prune = prune
    }

    deinit {
        for key in observerKeys.withLock({ $0 }) { client.changes.remove(key) }
    }

    func resolve() async -> Result<ChannelResolution, TransportFailure> {
        await client.start()
        let outcome = await XDSWalk.settle(patience: patience) { () async -> XDSWalk.Step<ChannelResolution> in
            let unrouted = XDSWalk.Step<ChannelResolution>.failed(
                "no route sends calls to cluster '\(cluster)' any more"
            )
            guard isRouted() else { return unrouted }
            let step = await XDSWalk.resolution(ofCluster: cluster, client)
            // The routes moved on while this walk subscribed: what it asked for goes again.
            guard isRouted() else {
                await prune()
                return unrouted
            }
            return step
        }
        switch outcome {
        case .value(let resolution): return .success(resolution)
        case .failed(let reason): return .failure(.resolutionFailed(host: cluster, reason: reason))
        }
    }

    func observeChanges(_ changed: @escaping @Sendable () -> Void) {
        let key = client.changes.add(changed)
        observerKeys.withLock { $0.append(key) }
    }
}
