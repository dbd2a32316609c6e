import AuthRPCSystem

/// A channel's per-call routing, when its resolver routes calls (``ChannelCallRouter``): the
/// router, and the connections of each group calls have gone to, made the first time a call goes
/// to a group and kept until the channel closes or the routes stop naming the group.
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
        router.observeRouteChanges { [weak self] in self?.closeUnrouted() }
    }

    /// Group `name`'s connections; `unavailable` once the channel is closed.
    func connections(forGroup name: String) throws(RPCError) -> ConnectionManager {
        let (manager, unrouted) = groups.withLock { groups -> (ConnectionManager?, [ConnectionManager]) in
            if groups.isClosed { return (nil, []) }
            if let manager = groups.managers[name] { return (manager, []) }
            let unrouted = takeUnrouted(&groups)
            // Made under the lock (no I/O: a manager connects when a call first asks), so two
            // calls never make two for one group.
            let manager = makeManager(name, router.resolver(forGroup: name))
            groups.managers[name] = manager
            return (manager, unrouted)
        }
        for left in unrouted { left.close() }
        guard let manager else { throw RPCError(code: .unavailable, message: "the channel is closed") }
        return manager
    }

    /// Closes the groups the routes no longer name: there are never more than the routes name,
    /// however many the control plane has named before.
    private func closeUnrouted() {
        for left in groups.withLock({ takeUnrouted(&$0) }) { left.close() }
    }

    private func takeUnrouted(_ groups: inout Groups) -> [ConnectionManager] {
        var unrouted: [ConnectionManager] = []
        for (group, manager) in groups.managers where !router.routes(toGroup: group) {
            groups.managers[group] = nil
            unrouted.append(manager)
        }
        return unrouted
    }

    /// The groups whose connections the channel holds now, by name.
    var groupNames: [String] {
        groups.withLock { $0.managers.keys.sorted() }
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
