import AuthRPCSystem

/// A channel's per-call routing, when its resolver routes calls (``ChannelCallRouter``): the
/// router, and the connections of each group calls have gone to, made the first time a call goes
/// to a group and kept until the channel closes.
final class CallRouting: Sendable {
    private struct Groups {
        var managers: [String: ConnectionManager] = [:]
        var isClosed = false
    }

    let router: any ChannelCallRouter
    /// Makes the connections of a group: the channel's own settings, the group's resolver.
    private let makeManager: @Sendable (_ group: String, any ChannelResolver) -> ConnectionManager
    private let groups = Locked(Groups())

    init(
        router: any ChannelCallRouter,
        makeManager: @escaping @Sendable (_ group: String, any ChannelResolver) -> ConnectionManager
    ) {
        self.router = router
        self.makeManager = makeManager
    }

    /// Group `name`'s connections; `unavailable` once the channel is closed.
    func connections(forGroup name: String) throws(RPCError) -> ConnectionManager {
        let manager = groups.withLock { groups -> ConnectionManager? in
            if groups.isClosed { return nil }
            if let manager = groups.managers[name] { return manager }
            // Made under the lock (no I/O: a manager connects when a call first asks), so two
            // calls never make two for one group.
            let manager = makeManager(name, router.resolver(forGroup: name))
            groups.managers[name] = manager
            return manager
        }
        guard let manager else { throw RPCError(code: .unavailable, message: "the channel is closed") }
        return manager
    }

    /// Closes every group's connections as ``ConnectionManager/close()`` does; no group is made
    /// after this.
    func close() {
        let managers = groups.withLock { groups in
            groups.isClosed = true
            return Array(groups.managers.values)
        }
        for manager in managers { manager.close() }
    }

    /// ``close()``, then waits for every group's connections to end.
    func shutdown() async {
        close()
        for manager in groups.withLock({ Array($0.managers.values) }) {
            await manager.shutdown()
        }
    }

    /// How many of the groups' connections have not ended yet.
    var openConnectionCount: Int {
        groups.withLock { Array($0.managers.values) }.reduce(0) { $0 + $1.openConnectionCount }
    }
}
