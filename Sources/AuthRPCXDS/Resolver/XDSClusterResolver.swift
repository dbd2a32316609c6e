package import AuthRPC
internal import AuthRPCSystem
package import AuthRPCTransport

/// The endpoints of one cluster a channel's routes send calls to (other than the first, which
/// ``XDSNameResolver`` resolves), from the channel's ADS client: the cluster's endpoints placed by
/// priority and locality, resolved again whenever the control plane changes them.
final class XDSClusterResolver: ChannelResolver {
    let cluster: String
    let client: XDSADSClient
    /// How long one resolution may wait for the control plane (past the does-not-exist timer).
    let patience: Duration
    private let observerKeys = Locked<[Int]>([])

    init(cluster: String, client: XDSADSClient, patience: Duration) {
        self.cluster = cluster
        self.client = client
        self.patience = patience
    }

    deinit {
        for key in observerKeys.withLock({ $0 }) { client.changes.remove(key) }
    }

    func resolve() async -> Result<ChannelResolution, TransportFailure> {
        await client.start()
        switch await XDSWalk.settle(patience: patience, { await XDSWalk.resolution(ofCluster: cluster, client) }) {
        case .value(let resolution): return .success(resolution)
        case .failed(let reason): return .failure(.resolutionFailed(host: cluster, reason: reason))
        }
    }

    func observeChanges(_ changed: @escaping @Sendable () -> Void) {
        let key = client.changes.add(changed)
        observerKeys.withLock { $0.append(key) }
    }
}
