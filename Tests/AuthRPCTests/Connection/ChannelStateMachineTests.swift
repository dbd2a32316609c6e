import AuthRPCSystem
import AuthRPCTransport
import Testing

@testable import AuthRPC

/// A connection as the state machine sees one: where it went, and whether it takes streams.
private final class StandIn: SubchannelConnection {
    let remoteAddress: SocketAddress?
    private let accepting = Locked(true)

    init(_ endpoint: ChannelEndpoint?) {
        if case .address(let address) = endpoint { remoteAddress = address } else { remoteAddress = nil }
    }

    var isAcceptingStreams: Bool { accepting.withLock { $0 } }

    func stopAccepting() { accepting.withLock { $0 = false } }
}

private typealias Machine = ChannelStateMachine<StandIn>

private func address(_ last: Int, port: Int = 50051) -> ChannelEndpoint {
    .address(try! SocketAddress(ipAddress: "127.0.0.\(last)", port: port))
}

private let refused = TransportFailure.connectFailed(target: "t", reason: "connection refused", kind: .refused)

/// A machine, a clock the test moves, and the actions of the last event.
private struct Harness {
    var machine: Machine
    var now = ContinuousClock.now
    var actions = Machine.Actions()
    /// Every state published, in order.
    var published: [ConnectivityState] = []

    init(
        _ policy: LoadBalancingPolicy = .pickFirst,
        addresses: [ChannelEndpoint]? = nil,
        idleTimeout: Duration? = .seconds(1800)
    ) {
        var backoff = ConnectionBackoff.default
        backoff.jitter = 0
        machine = Machine(
            configuration: .init(
                loadBalancing: policy,
                backoff: backoff,
                resolutionInterval: .seconds(30),
                idleTimeout: idleTimeout
            ),
            endpoints: addresses
        )
    }

    private mutating func record() {
        if let state = actions.publish { published.append(state) }
    }

    mutating func pick(waitForReady: Bool = false) -> Machine.Pick {
        actions = Machine.Actions()
        let pick = machine.pick(waitForReady: waitForReady, now: now, &actions)
        record()
        return pick
    }

    mutating func resolved(_ list: [ChannelEndpoint], placements: [ChannelResolution.Placement]? = nil) {
        guard let id = actions.resolve else {
            Issue.record("no resolution was asked for")
            return
        }
        actions = Machine.Actions()
        machine.resolved(id, list, placements: placements, now: now, &actions)
        record()
    }

    mutating func resolutionFailed(_ id: Int, _ error: TransportFailure) {
        actions = Machine.Actions()
        machine.resolutionFailed(id, error, now: now, &actions)
        record()
    }

    mutating func connected(_ attempt: Machine.ConnectAttempt, _ connection: StandIn) {
        actions = Machine.Actions()
        machine.connected(attempt.subchannel, attempt: attempt.attempt, connection, &actions)
        record()
    }

    mutating func failed(_ attempt: Machine.ConnectAttempt, _ error: TransportFailure = refused) {
        actions = Machine.Actions()
        machine.attemptFailed(attempt.subchannel, attempt: attempt.attempt, error, now: now, &actions)
        record()
    }

    mutating func closed(_ attempt: Machine.ConnectAttempt, _ error: TransportFailure?) {
        actions = Machine.Actions()
        machine.connectionClosed(attempt.subchannel, attempt: attempt.attempt, error, &actions)
        record()
    }

    mutating func draining(_ attempt: Machine.ConnectAttempt) {
        actions = Machine.Actions()
        machine.connectionDraining(attempt.subchannel, attempt: attempt.attempt, &actions)
        record()
    }

    mutating func resolverChanged() {
        actions = Machine.Actions()
        machine.resolverChanged(&actions)
        record()
    }

    mutating func fire(_ timer: Machine.Timer) {
        actions = Machine.Actions()
        machine.timerFired(timer, now: now, &actions)
        record()
    }

    mutating func close() {
        actions = Machine.Actions()
        machine.close(&actions)
        record()
    }

    /// Connects every attempt the last event started, to stand-ins for their first address.
    mutating func connectAll() -> [StandIn] {
        let attempts = actions.connect
        var connections: [StandIn] = []
        for attempt in attempts {
            let connection = StandIn(attempt.endpoints[0])
            connected(attempt, connection)
            connections.append(connection)
        }
        return connections
    }
}

extension Machine.Pick {
    fileprivate var connection: StandIn? {
        if case .use(let connection) = self { return connection }
        return nil
    }

    fileprivate var waits: Bool {
        if case .wait = self { return true }
        return false
    }
}

@Suite("Channel state machine (resolver, load balancer, subchannels), without I/O")
struct ChannelStateMachineTests {
    @Test("pick-first over a name: the first call looks it up, one attempt goes to every address, then calls use it")
    func pickFirstConnects() {
        var harness = Harness()
        #expect(harness.machine.state == .idle)
        #expect(harness.pick().waits)
        #expect(harness.actions.resolve != nil)
        #expect(harness.actions.connect.isEmpty)
        #expect(harness.machine.state == .connecting)

        harness.resolved([address(1), address(2), address(1)])
        #expect(harness.actions.connect.count == 1)
        #expect(harness.actions.connect.first?.endpoints == [address(1), address(2)])
        #expect(harness.actions.wake)
        #expect(harness.actions.schedule.contains { $0.0 == .resolution && $0.1 == harness.now + .seconds(30) })

        let attempt = harness.actions.connect[0]
        let connection = StandIn(address(2))
        harness.connected(attempt, connection)
        #expect(harness.machine.state == .ready)
        if case .use(let home) = harness.actions.home { #expect(home === connection) } else { Issue.record("no home") }
        #expect(harness.machine.pickReady() === connection)
        #expect(harness.pick().connection === connection)
        #expect(harness.published == [.connecting, .ready])
    }

    @Test("many calls before the first connection: one lookup, one attempt")
    func sharedAttempt() {
        var harness = Harness()
        #expect(harness.pick().waits)
        harness.resolved([address(1)])
        let attempts = harness.actions.connect
        for _ in 0..<10 {
            #expect(harness.pick().waits)
            #expect(harness.actions.connect.isEmpty && harness.actions.resolve == nil)
        }
        #expect(attempts.count == 1)
    }

    @Test("pick-first: a lost connection makes the channel idle; the next call looks the name up afresh")
    func pickFirstLost() {
        var harness = Harness()
        _ = harness.pick()
        harness.resolved([address(1)])
        let attempt = harness.actions.connect[0]
        _ = harness.connectAll()
        harness.closed(attempt, .connectionClosed(reason: "closed by the server", streamWasSent: true))
        #expect(harness.machine.state == .idle)
        #expect(harness.actions.cancelTimers)
        #expect(harness.actions.resolve == nil)
        if case .leave = harness.actions.home {} else { Issue.record("the executor keeps a dead connection") }

        #expect(harness.pick().waits)
        #expect(harness.actions.resolve != nil)
        #expect(harness.actions.connect.isEmpty, "pick-first waits for the fresh list")
        harness.resolved([address(3)])
        #expect(harness.actions.connect.map(\.endpoints) == [[address(3)]])
        #expect(harness.published == [.connecting, .ready, .idle, .connecting])
    }

    @Test("GOAWAY: new calls go to a new connection; a connection that stopped taking streams is never picked")
    func goaway() {
        var harness = Harness()
        _ = harness.pick()
        harness.resolved([address(1)])
        let attempt = harness.actions.connect[0]
        let first = harness.connectAll()[0]
        // The connection refuses streams before its GOAWAY event arrives.
        first.stopAccepting()
        #expect(harness.machine.pickReady() == nil)
        #expect(harness.pick().waits)
        #expect(harness.actions.resolve != nil)
        // The late event changes nothing more.
        let resolution = harness.actions
        harness.draining(attempt)
        #expect(harness.actions.connect.isEmpty && harness.actions.resolve == nil)
        harness.actions = resolution
        harness.resolved([address(1)])
        #expect(harness.actions.connect.count == 1)
        let second = harness.connectAll()[0]
        #expect(harness.pick().connection === second)
    }

    @Test("round-robin: a connection per address, calls in turn over the ready ones")
    func roundRobinSpreads() {
        var harness = Harness(.roundRobin)
        _ = harness.pick()
        harness.resolved([address(1), address(2), address(3)])
        #expect(harness.actions.connect.map(\.endpoints) == [[address(1)], [address(2)], [address(3)]])
        let attempts = harness.actions.connect
        let first = StandIn(address(1))
        harness.connected(attempts[0], first)
        #expect(harness.machine.state == .ready)
        // Only the ready one is picked while the others connect.
        #expect((0..<3).map { _ in harness.machine.pickReady() }.allSatisfy { $0 === first })
        let second = StandIn(address(2))
        let third = StandIn(address(3))
        harness.connected(attempts[1], second)
        harness.connected(attempts[2], third)
        var picks: [StandIn] = []
        for _ in 0..<9 { picks.append(harness.machine.pickReady()!) }
        for connection in [first, second, third] {
            #expect(picks.filter { $0 === connection }.count == 3)
        }
        #expect(picks[0] !== picks[1] && picks[1] !== picks[2] && picks[0] !== picks[2])
    }

    @Test(
        "a resolver's change is looked up at once: a new address joins the rotation, a removed one leaves it; a change during a lookup is looked up after it; an idle channel waits for a call"
    )
    func resolverChangesArePushed() {
        var idle = Harness(.roundRobin)
        idle.resolverChanged()
        #expect(idle.actions.resolve == nil, "nothing is looked up before a call comes")

        var harness = Harness(.roundRobin)
        _ = harness.pick()
        harness.resolved([address(1)])
        let first = harness.actions.connect
        harness.connected(first[0], StandIn(address(1)))
        harness.resolverChanged()
        #expect(harness.actions.resolve != nil, "looked up at once, not after the 30 s interval")
        harness.resolved([address(1), address(2)])
        #expect(harness.actions.connect.map(\.endpoints) == [[address(2)]])
        harness.connected(harness.actions.connect[0], StandIn(address(2)))
        #expect(harness.machine.subchannels.count == 2)

        // A change while a lookup is under way: that lookup's answer may predate it.
        harness.resolverChanged()
        let underWay = harness.actions
        harness.resolverChanged()
        #expect(harness.actions.resolve == nil, "one lookup at a time")
        harness.actions = underWay
        harness.resolved([address(2)])
        #expect(harness.actions.resolve != nil, "looked up again once the first lookup ended")
        #expect(harness.machine.subchannels.map(\.endpoints) == [[address(2)]])
    }

    @Test("round-robin: a lost connection is skipped, reconnected at once, backs off, and takes calls again when back")
    func roundRobinLosesOne() {
        var harness = Harness(.roundRobin)
        _ = harness.pick()
        harness.resolved([address(1), address(2), address(3)])
        let attempts = harness.actions.connect
        let connections = harness.connectAll()
        harness.closed(attempts[1], .connectionClosed(reason: "closed by the server", streamWasSent: true))
        #expect(harness.machine.state == .ready)
        #expect(harness.actions.resolve != nil, "the name is looked up again")
        #expect(harness.actions.connect.map(\.endpoints) == [[address(2)]])
        let retry = harness.actions.connect[0]
        for _ in 0..<6 { #expect(harness.machine.pickReady() !== connections[1]) }

        harness.failed(retry)
        #expect(harness.machine.state == .ready)
        let due = harness.now + .seconds(1)
        #expect(harness.actions.schedule.contains { $0.0 == .retry(subchannel: retry.subchannel) && $0.1 == due })
        harness.now = due
        harness.fire(.retry(subchannel: retry.subchannel))
        #expect(harness.actions.connect.map(\.endpoints) == [[address(2)]])
        let back = StandIn(address(2))
        harness.connected(harness.actions.connect[0], back)
        var picks: [StandIn] = []
        for _ in 0..<6 { picks.append(harness.machine.pickReady()!) }
        #expect(picks.filter { $0 === back }.count == 2)
    }

    @Test("round-robin: connections that all stopped taking streams before saying so are all replaced")
    func roundRobinAllDraining() {
        var harness = Harness(.roundRobin)
        _ = harness.pick()
        harness.resolved([address(1), address(2), address(3)])
        let connections = harness.connectAll()
        for connection in connections { connection.stopAccepting() }
        #expect(harness.machine.pickReady() == nil)
        #expect(harness.pick().waits)
        #expect(harness.actions.connect.map(\.endpoints) == [[address(1)], [address(2)], [address(3)]])
        #expect(harness.actions.resolve != nil)
        #expect(harness.machine.state == .connecting)
    }

    @Test("a failed attempt backs off by gRPC's policy; without waitForReady calls fail at once, with it they wait")
    func backoffAndWaitForReady() {
        var harness = Harness(addresses: [address(1)])
        #expect(harness.pick().waits)
        var attempt = harness.actions.connect[0]
        harness.failed(attempt)
        #expect(harness.machine.state == .transientFailure)
        #expect(harness.actions.schedule.map(\.1) == [harness.now + .seconds(1)])
        guard case .fail(let error) = harness.pick() else {
            Issue.record("a call without waitForReady waits in transient failure")
            return
        }
        #expect(error == refused)
        #expect(harness.actions.connect.isEmpty, "no attempt during the backoff")
        #expect(harness.pick(waitForReady: true).waits)
        #expect(harness.machine.state == .transientFailure)

        // The backoff ends: the next attempt starts by itself, and takes 1.6 times longer to retry.
        harness.now = harness.now + .seconds(1)
        harness.fire(.retry(subchannel: attempt.subchannel))
        #expect(harness.machine.state == .connecting)
        attempt = harness.actions.connect[0]
        #expect(harness.pick().waits, "calls wait while connecting")
        harness.failed(attempt)
        let next = harness.actions.schedule.map { $0.1 - harness.now }
        #expect(next.count == 1 && next[0] > .milliseconds(1599) && next[0] < .milliseconds(1601), "\(next)")
        // A call after the backoff, before its timer, starts the attempt itself.
        harness.now = harness.now + .seconds(2)
        #expect(harness.pick().waits)
        #expect(harness.actions.connect.count == 1)
        _ = harness.connectAll()
        #expect(harness.machine.state == .ready)
        #expect(
            harness.published == [
                .connecting, .transientFailure, .connecting, .transientFailure, .connecting, .ready,
            ]
        )
    }

    @Test(
        "a name that does not resolve: calls fail with the resolver's reason, and it is looked up again after a backoff"
    )
    func resolutionFails() {
        var harness = Harness()
        _ = harness.pick()
        let id = harness.actions.resolve!
        let failure = TransportFailure.resolutionFailed(host: "backend", reason: "name or service not known")
        harness.resolutionFailed(id, failure)
        #expect(harness.machine.state == .transientFailure)
        #expect(harness.actions.wake)
        guard case .fail(let error) = harness.pick() else {
            Issue.record("the call was not failed")
            return
        }
        #expect(error == failure)
        #expect(harness.actions.resolve == nil, "no lookup during the backoff")
        harness.now = harness.now + .seconds(1)
        harness.fire(.resolution)
        #expect(harness.actions.resolve != nil)
        harness.resolved([address(1)])
        #expect(harness.machine.state == .connecting)
    }

    @Test("a failed lookup keeps the addresses of the last one")
    func resolutionFailsWithAddresses() {
        var harness = Harness(.roundRobin)
        _ = harness.pick()
        harness.resolved([address(1), address(2)])
        _ = harness.connectAll()
        harness.now = harness.now + .seconds(30)
        harness.fire(.resolution)
        let id = harness.actions.resolve!
        harness.resolutionFailed(id, .resolutionFailed(host: "backend", reason: "temporary failure"))
        #expect(harness.machine.state == .ready)
        #expect(harness.machine.endpoints == [address(1), address(2)])
        #expect(harness.machine.subchannels.count == 2)
        #expect(harness.actions.schedule.contains { $0.0 == .resolution })
    }

    @Test("round-robin follows a new address list: kept, closed, added")
    func roundRobinFollowsTheName() {
        var harness = Harness(.roundRobin)
        _ = harness.pick()
        harness.resolved([address(1), address(2), address(3)])
        let connections = harness.connectAll()
        harness.now = harness.now + .seconds(30)
        harness.fire(.resolution)
        harness.resolved([address(1), address(2), address(4)])
        #expect(harness.actions.close.count == 1 && harness.actions.close[0] === connections[2])
        #expect(harness.actions.connect.map(\.endpoints) == [[address(4)]])
        #expect(harness.machine.subchannels.compactMap(\.connection).count == 2)
        let added = harness.connectAll()[0]
        var picks: [StandIn] = []
        for _ in 0..<6 { picks.append(harness.machine.pickReady()!) }
        #expect(!picks.contains { $0 === connections[2] })
        #expect(picks.filter { $0 === added }.count == 2)
    }

    @Test("pick-first follows a new list when its address left it, and keeps its connection when it did not")
    func pickFirstFollowsTheName() {
        var harness = Harness()
        _ = harness.pick()
        harness.resolved([address(2), address(3)])
        let attempt = harness.actions.connect[0]
        let connection = StandIn(address(2))
        harness.connected(attempt, connection)
        harness.fire(.resolution)
        harness.resolved([address(3), address(2)])
        #expect(harness.actions.close.isEmpty && harness.actions.connect.isEmpty)
        #expect(harness.machine.pickReady() === connection)
        harness.fire(.resolution)
        harness.resolved([address(3)])
        #expect(harness.actions.close.first === connection)
        #expect(harness.actions.connect.map(\.endpoints) == [[address(3)]])
        #expect(harness.machine.state == .connecting)
    }

    @Test("the idle timeout: connections that close for idleness, or backoff with nobody asking, make the channel idle")
    func idle() {
        var harness = Harness(.roundRobin, addresses: [address(1), address(2)], idleTimeout: .seconds(60))
        _ = harness.pick()
        let attempts = harness.actions.connect
        _ = harness.connectAll()
        harness.closed(attempts[0], nil)
        #expect(harness.machine.state == .ready)
        #expect(harness.actions.connect.isEmpty, "an idle connection is not replaced")
        harness.closed(attempts[1], nil)
        #expect(harness.machine.state == .idle)
        #expect(harness.actions.cancelTimers)

        // Backing off with nobody asking for the idle timeout: stop trying.
        var single = Harness(addresses: [address(1)], idleTimeout: .seconds(60))
        _ = single.pick()
        let attempt = single.actions.connect[0]
        single.failed(attempt)
        single.now = single.now + .seconds(1)
        single.fire(.retry(subchannel: attempt.subchannel))
        #expect(single.actions.connect.count == 1, "a call asked within the idle timeout")
        single.failed(single.actions.connect[0])
        single.now = single.now + .seconds(61)
        single.fire(.retry(subchannel: attempt.subchannel))
        #expect(single.actions.connect.isEmpty)
        #expect(single.machine.state == .idle)
        #expect(single.actions.cancelTimers)
        #expect(single.actions.wake, "a call still waiting asks again")
        #expect(single.pick().waits)
        #expect(single.actions.connect.count == 1, "the next call connects again")
    }

    @Test("close: ready connections close gracefully, late attempts are closed, calls fail, SHUTDOWN is last")
    func shutdown() {
        var harness = Harness(.roundRobin, addresses: [address(1), address(2)])
        _ = harness.pick()
        let attempts = harness.actions.connect
        let first = StandIn(address(1))
        harness.connected(attempts[0], first)
        harness.close()
        #expect(harness.machine.state == .shutdown)
        #expect(harness.actions.close.count == 1 && harness.actions.close[0] === first)
        #expect(harness.actions.cancelTimers && harness.actions.wake)
        let late = StandIn(address(2))
        harness.connected(attempts[1], late)
        #expect(harness.actions.close.first === late)
        guard case .closed = harness.pick() else {
            Issue.record("a call on a closed channel was not refused")
            return
        }
        harness.fire(.resolution)
        #expect(harness.actions.connect.isEmpty && harness.actions.resolve == nil)
        #expect(harness.published.last == .shutdown)
    }

    @Test("events about attempts that are no longer current change nothing")
    func staleEvents() {
        var harness = Harness(addresses: [address(1)])
        _ = harness.pick()
        let first = harness.actions.connect[0]
        harness.failed(first)
        harness.now = harness.now + .seconds(1)
        harness.fire(.retry(subchannel: first.subchannel))
        let second = harness.actions.connect[0]
        harness.failed(first)
        #expect(harness.machine.state == .connecting)
        let stale = StandIn(address(1))
        harness.connected(first, stale)
        #expect(harness.actions.close.first === stale)
        let current = StandIn(address(1))
        harness.connected(second, current)
        harness.closed(first, .keepaliveTimeout)
        #expect(harness.machine.pickReady() === current)
    }

    @Test("fixed addresses are never looked up")
    func fixedAddresses() {
        var harness = Harness(.roundRobin, addresses: [address(1), address(2)])
        _ = harness.pick()
        #expect(harness.actions.resolve == nil)
        #expect(harness.actions.connect.count == 2)
        let attempts = harness.actions.connect
        _ = harness.connectAll()
        harness.closed(attempts[0], .connectionClosed(reason: "reset", streamWasSent: true))
        #expect(harness.actions.resolve == nil)
        #expect(harness.actions.schedule.isEmpty)
    }

    @Test("round-robin through a proxy: one attempt, so one tunnel, per proxied target; never a lookup")
    func proxiedEndpoints() {
        let proxy = ProxyServer(address: HostAndPort(host: "proxy.corp.example", port: 3128))
        let targets = [HostAndPort(host: "10.0.0.1", port: 443), HostAndPort(host: "10.0.0.2", port: 443)]
        var harness = Harness(.roundRobin, addresses: targets.map { .proxied(proxy, target: $0) })
        _ = harness.pick()
        #expect(harness.actions.resolve == nil)
        #expect(harness.actions.connect.map(\.endpoints) == targets.map { [.proxied(proxy, target: $0)] })
        let attempts = harness.actions.connect
        let connections = harness.connectAll()
        #expect(harness.machine.pickReady() === connections[0])
        #expect(harness.machine.pickReady() === connections[1])
        harness.closed(attempts[1], .connectionClosed(reason: "reset", streamWasSent: true))
        #expect(harness.actions.resolve == nil)
        #expect(harness.actions.connect.map(\.endpoints) == [[.proxied(proxy, target: targets[1])]])
    }
}

// MARK: - Priorities and weighted localities (gRFC A27)

extension ChannelStateMachineTests {
    private static func place(_ priority: Int, _ locality: Int, weight: UInt32 = 1) -> ChannelResolution.Placement {
        ChannelResolution.Placement(priority: priority, locality: locality, weight: weight)
    }

    @Test(
        "priorities: only priority 0 connects; once all its attempts fail priority 1 connects and serves; calls come back when priority 0 is ready"
    )
    func priorityFailoverByConnectivity() {
        var harness = Harness(.roundRobin)
        #expect(harness.pick().waits)
        // Listed out of order: the machine orders them by priority.
        harness.resolved(
            [address(3), address(1), address(2)],
            placements: [Self.place(1, 1), Self.place(0, 0), Self.place(0, 0)]
        )
        let first = harness.actions.connect
        #expect(first.map(\.endpoints) == [[address(1)], [address(2)]])

        harness.failed(first[0])
        #expect(harness.actions.connect.isEmpty, "one endpoint of priority 0 is still connecting")
        harness.failed(first[1])
        #expect(harness.actions.connect.map(\.endpoints) == [[address(3)]])
        #expect(harness.machine.state == .connecting)
        let standby = harness.connectAll()
        #expect(harness.pick().connection === standby[0])

        // Priority 0's backoff ends and it connects: calls go back to it.
        harness.now += .seconds(5)
        harness.fire(.retry(subchannel: first[0].subchannel))
        let retried = harness.actions.connect
        #expect(retried.map(\.endpoints) == [[address(1)]])
        #expect(harness.pick().connection === standby[0], "priority 0 is still connecting")
        guard retried.count == 1 else { return }
        let primary = StandIn(address(1))
        harness.connected(retried[0], primary)
        for _ in 0..<5 { #expect(harness.pick().connection === primary) }
    }

    @Test(
        "the failover timer: a priority still connecting after 10 s counts as failed, the next one connects and serves"
    )
    func failoverTimer() {
        var harness = Harness(.roundRobin)
        #expect(harness.pick().waits)
        harness.resolved([address(1), address(2)], placements: [Self.place(0, 0), Self.place(1, 1)])
        #expect(harness.actions.connect.map(\.endpoints) == [[address(1)]])
        let deadline = harness.actions.schedule.first { $0.0 == .failover(priority: 0) }?.1
        #expect(deadline == harness.now + Machine.failoverTimeout)

        // The attempt neither connects nor fails. Early, the timer changes nothing.
        harness.now += .seconds(9)
        harness.fire(.failover(priority: 0))
        #expect(harness.actions.connect.isEmpty)
        harness.now += .seconds(1)
        harness.fire(.failover(priority: 0))
        #expect(harness.actions.connect.map(\.endpoints) == [[address(2)]])
        let standby = harness.connectAll()
        #expect(harness.pick().connection === standby[0])
    }

    @Test("weighted localities: ready localities are picked 3:1 by weight, a locality's endpoints in turn")
    func weightedLocalities() {
        var harness = Harness(.roundRobin)
        #expect(harness.pick().waits)
        harness.resolved(
            [address(1), address(2), address(3), address(4)],
            placements: [
                Self.place(0, 0, weight: 3), Self.place(0, 0, weight: 3), Self.place(0, 1, weight: 1),
                Self.place(1, 2, weight: 5),
            ]
        )
        #expect(harness.actions.connect.count == 3, "priority 1 waits")
        let connections = harness.connectAll()
        var counts: [ObjectIdentifier: Int] = [:]
        for _ in 0..<4000 {
            guard let connection = harness.pick().connection else {
                Issue.record("no connection")
                return
            }
            counts[ObjectIdentifier(connection), default: 0] += 1
        }
        let heavy =
            counts[ObjectIdentifier(connections[0]), default: 0] + counts[ObjectIdentifier(connections[1]), default: 0]
        #expect(abs(Double(heavy) / 4000 - 0.75) <= 0.03, "\(counts)")
        // Round robin inside the heavy locality: its two endpoints within one call of each other.
        #expect(
            abs(
                counts[ObjectIdentifier(connections[0]), default: 0]
                    - counts[ObjectIdentifier(connections[1]), default: 0]
            )
                <= 1
        )

        // The light locality's only connection goes away: every call goes to the heavy one.
        connections[2].stopAccepting()
        for _ in 0..<20 {
            let picked = harness.pick().connection
            #expect(picked === connections[0] || picked === connections[1])
        }
    }

    @Test("placements that do not match the endpoints one for one are dropped: plain round robin")
    func mismatchedPlacements() {
        var harness = Harness(.roundRobin)
        #expect(harness.pick().waits)
        harness.resolved([address(1), address(2)], placements: [Self.place(1, 0)])
        #expect(harness.machine.placements == nil)
        #expect(harness.actions.connect.count == 2)
    }
}
