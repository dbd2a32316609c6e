import AuthRPCTransport

/// Every decision of a channel's connection management, with no I/O: when to look the target's
/// name up, which subchannels to connect, which connection a call takes, when to back off, go
/// idle or shut down, and which ``ConnectivityState`` the channel is in.
///
/// The channel's ``ConnectionManager`` feeds it events (a call asking for a connection, a
/// resolution's result, an attempt's outcome, a connection's GOAWAY or end, a timer) under its
/// lock, and carries out the ``Actions`` it answers with (resolve, connect, close, schedule,
/// wake the waiting calls, report the new state) outside it.
///
/// - A name is resolved when the channel leaves idle, when an attempt fails, every
///   `resolutionInterval` while the channel is in use, and when a connection ends or gets
///   GOAWAY (with pick-first the channel is then idle, so the next call resolves it before it
///   reconnects). When a lookup fails and earlier addresses are known, they stay in use.
/// - The channel's ``ChannelEndpoint``s are the addresses a lookup found (or the target gave),
///   or, through an HTTP CONNECT proxy, the targets the proxy tunnels to (a name is then the
///   proxy's to look up, so the list is fixed).
/// - Pick-first has one subchannel over every endpoint (the transport tries them: addresses by
///   Happy Eyeballs) and connects when a call asks. Round-robin has one subchannel per
///   endpoint, connects them all at once, picks the ready ones in turn, and reconnects one that
///   failed or ended at once.
/// - When a resolver places its addresses in priorities and weighted localities (gRFC A27),
///   round-robin connects the first priority, and each next one once every priority before it
///   has failed: each of its attempts backing off, or none ready 10 s after it began connecting
///   (A27's failover timer). The first priority with a ready connection serves, a locality of
///   it with a ready connection is picked at random by weight, and its ready connections take
///   calls in turn.
/// - A failed attempt backs off by its subchannel's own backoff, then tries again by itself;
///   with nothing ready and no call asking for `idleTimeout`, the channel goes idle instead.
struct ChannelStateMachine<Connection: SubchannelConnection> {
    struct Configuration {
        var loadBalancing: LoadBalancingPolicy
        var backoff: ConnectionBackoff
        /// How long a looked-up address list is used before the name is looked up again.
        var resolutionInterval: Duration
        /// Nothing ready and no call for this long: idle. Nil: never.
        var idleTimeout: Duration?
    }

    /// What the manager schedules; scheduling a timer again replaces it.
    enum Timer: Hashable, Sendable {
        /// A subchannel's backoff ends.
        case retry(subchannel: Int)
        /// The name is due to be looked up again.
        case resolution
        /// A priority's failover time is up (gRFC A27): unless one of its connections is ready
        /// by then, the next priority connects.
        case failover(priority: Int)
    }

    /// gRFC A27's failover timer: how long a priority may connect before the next one does.
    static var failoverTimeout: Duration { .seconds(10) }

    /// A connection attempt to start.
    struct ConnectAttempt {
        let subchannel: Int
        let attempt: Int
        let endpoints: [ChannelEndpoint]
        let connectTimeout: Duration
    }

    /// Which connection's thread runs the channel executor's jobs.
    enum Home {
        case use(Connection)
        case leave(Connection)
    }

    /// What the manager does after an event, outside its lock.
    struct Actions {
        /// Start resolution number `resolve`.
        var resolve: Int?
        var connect: [ConnectAttempt] = []
        /// Close gracefully: calls in flight finish.
        var close: [Connection] = []
        var schedule: [(Timer, ContinuousClock.Instant)] = []
        var cancelTimers = false
        /// The channel's state changed to this.
        var publish: ConnectivityState?
        var home: Home?
        /// Waiting calls should ask again.
        var wake = false
    }

    /// What a call should do.
    enum Pick {
        case use(Connection)
        /// Wait for the channel to change, then ask again.
        case wait
        /// Fail now (transient failure, no wait-for-ready) with the latest failure.
        case fail(TransportFailure)
        case closed
    }

    private enum Phase {
        case idle
        case active
        case shutdown
    }

    private enum Resolution {
        /// Not looked up (or forgotten when the channel went idle).
        case none
        case resolving(id: Int)
        /// `endpoints` is the latest list.
        case resolved
        /// The lookup failed and no address is known; the next lookup is due at `retryAt`.
        case failed(TransportFailure, retryAt: ContinuousClock.Instant)
    }

    var configuration: Configuration
    /// Whether the target is a name to look up (else `endpoints` are fixed).
    let resolvesName: Bool
    private var phase = Phase.idle
    private var resolution: Resolution
    private var resolutionBackoff: ConnectionBackoffState
    private(set) var endpoints: [ChannelEndpoint]
    /// Where each endpoint sits in the resolver's balancing tree (in `endpoints`' order, which
    /// runs by priority, then locality); nil when the endpoints are equals.
    private(set) var placements: [ChannelResolution.Placement]?
    private(set) var subchannels: [Subchannel<Connection>] = []
    /// Where round-robin's next pick starts.
    private var cursor = 0
    /// Whether calls go by priorities and weighted localities (``pickTiered()``): placed
    /// endpoints in more than one locality.
    private var tiered = false
    /// Where each locality's next pick starts, by locality number.
    private var localityCursors: [Int] = []
    /// When each priority that has no ready connection began connecting: past
    /// ``failoverTimeout`` from then, it counts as failed.
    private var connectingSince: [Int: ContinuousClock.Instant] = [:]
    /// Where the weighted picks of localities come from.
    private var random = SplitMix64(seed: UInt64.random(in: .min ... .max))
    private var nextID = 0
    /// The resolver said its answer changed while a lookup was under way: look up again when
    /// that one ends.
    private var changedWhileResolving = false
    /// A call waits for a connection (set when one is told to wait, cleared when one is ready).
    private var picksWaiting = false
    /// When a call last found no ready connection.
    private var lastRequest = ContinuousClock.now
    /// Why the latest attempt or lookup failed: what calls fail with in transient failure.
    private(set) var lastFailure: TransportFailure?
    /// The state last reported.
    private(set) var state = ConnectivityState.idle
    private var home: Connection?

    /// A channel to a name to look up (`endpoints` nil) or to fixed endpoints.
    init(configuration: Configuration, endpoints: [ChannelEndpoint]?) {
        self.configuration = configuration
        self.resolvesName = endpoints == nil
        self.endpoints = endpoints.map(Self.unique) ?? []
        self.resolution = endpoints == nil ? .none : .resolved
        self.resolutionBackoff = ConnectionBackoffState(configuration.backoff)
    }

    // MARK: - Calls

    /// The next ready connection that takes streams, round-robin's turn advanced: the hot path,
    /// which allocates nothing and reads no clock.
    @inline(__always)
    mutating func pickReady() -> Connection? {
        if tiered { return pickTiered() }
        let count = subchannels.count
        var index = cursor
        for _ in 0..<count {
            if index >= count { index = 0 }
            if let connection = subchannels[index].connection, connection.isAcceptingStreams {
                cursor = index + 1
                return connection
            }
            index += 1
        }
        return nil
    }

    /// gRFC A27's tree: the first priority with a ready connection serves; a locality of it with
    /// a ready connection is picked at random by weight; its ready connections take calls in
    /// turn. (Subchannels run by priority, then locality.) Inlined, as ``pickReady()`` is, so
    /// that it is specialized for the channel's connection type: generic, every read of a
    /// subchannel would copy it through the runtime.
    @inline(__always)
    private mutating func pickTiered() -> Connection? {
        let count = subchannels.count
        var first = 0
        while first < count, readyConnection(at: first) == nil { first += 1 }
        guard first < count, let priority = subchannels[first].placement?.priority else { return nil }
        var end = first
        var total: UInt64 = 0
        var counted = -1
        while end < count, let placement = subchannels[end].placement, placement.priority == priority {
            if placement.locality != counted, readyConnection(at: end) != nil {
                total += UInt64(placement.weight)
                counted = placement.locality
            }
            end += 1
        }
        var locality = subchannels[first].placement?.locality ?? 0
        if total > 0 {
            var point = random.next() % total
            counted = -1
            for index in first..<end {
                guard let placement = subchannels[index].placement, placement.locality != counted,
                    readyConnection(at: index) != nil
                else { continue }
                counted = placement.locality
                if point < UInt64(placement.weight) {
                    locality = placement.locality
                    break
                }
                point -= UInt64(placement.weight)
            }
        }
        var ready = 0
        for index in first..<end where subchannels[index].placement?.locality == locality {
            if readyConnection(at: index) != nil { ready += 1 }
        }
        guard ready > 0, localityCursors.indices.contains(locality) else { return readyConnection(at: first) }
        var turn = localityCursors[locality] % ready
        localityCursors[locality] &+= 1
        for index in first..<end where subchannels[index].placement?.locality == locality {
            guard let connection = readyConnection(at: index) else { continue }
            if turn == 0 { return connection }
            turn -= 1
        }
        return readyConnection(at: first)
    }

    /// Subchannel `index`'s connection, if it is ready and takes streams.
    @inline(__always)
    private func readyConnection(at index: Int) -> Connection? {
        if let connection = subchannels[index].connection, connection.isAcceptingStreams {
            return connection
        }
        return nil
    }

    /// A call asks for a connection and none was ready: leave idle, look the name up, connect
    /// what should be, and tell the call to wait, fail (transient failure without
    /// `waitForReady`) or use a connection.
    mutating func pick(waitForReady: Bool, now: ContinuousClock.Instant, _ actions: inout Actions) -> Pick {
        if case .shutdown = phase { return .closed }
        if let connection = pickReady() { return .use(connection) }
        lastRequest = now
        // Connections that stopped taking streams (GOAWAY, idle, closing) before saying so.
        // (Counted afresh each time: going idle empties the list.)
        var index = 0
        while index < subchannels.count {
            if let connection = subchannels[index].connection, !connection.isAcceptingStreams {
                connectionEnded(at: index, lost: true, &actions)
            }
            index += 1
        }
        if case .idle = phase { phase = .active }
        connectAsNeeded(now: now, &actions)
        let pick: Pick
        switch aggregate() {
        case .transientFailure where !waitForReady:
            pick = .fail(lastFailure ?? .connectionClosed(reason: "no connection", streamWasSent: false))
        case .shutdown:
            pick = .closed
        default:
            picksWaiting = true
            pick = .wait
        }
        finish(&actions)
        return pick
    }

    // MARK: - Resolution

    /// Lookup `id` answered `found`, placed in a balancing tree by `placements` (one per
    /// endpoint) or all equals (nil).
    mutating func resolved(
        _ id: Int,
        _ found: [ChannelEndpoint],
        placements: [ChannelResolution.Placement]? = nil,
        now: ContinuousClock.Instant,
        _ actions: inout Actions
    ) {
        guard case .resolving(id) = resolution else { return }
        resolution = .resolved
        resolutionBackoff.reset()
        (endpoints, self.placements) = Self.unique(found, placements)
        // One locality (so one priority) is plain round robin, which the cheaper pick serves.
        let localities = Set(self.placements?.map(\.locality) ?? [])
        tiered = configuration.loadBalancing.spreadsOverAddresses && localities.count > 1
        connectingSince = [:]
        localityCursors = Array(repeating: 0, count: (self.placements?.map(\.locality).max() ?? -1) + 1)
        if case .active = phase {
            updateSubchannels(&actions)
            if picksWaiting || configuration.loadBalancing.spreadsOverAddresses { connectAsNeeded(now: now, &actions) }
            actions.schedule.append((.resolution, now + configuration.resolutionInterval))
        }
        resolveAgainIfChanged(&actions)
        actions.wake = true
        finish(&actions)
    }

    /// The resolver says its answer changed (a control plane pushed an update): look the name
    /// up again now, or when the lookup under way ends. An idle channel looks up afresh when a
    /// call comes anyway.
    mutating func resolverChanged(_ actions: inout Actions) {
        guard case .active = phase, resolvesName else { return }
        if isResolving {
            changedWhileResolving = true
            return
        }
        startResolution(&actions)
        finish(&actions)
    }

    /// Lookup `id` failed. Without earlier addresses the channel is in transient failure until
    /// a lookup succeeds (tried again after a backoff); with them, they stay in use.
    mutating func resolutionFailed(
        _ id: Int,
        _ error: TransportFailure,
        now: ContinuousClock.Instant,
        _ actions: inout Actions
    ) {
        guard case .resolving(id) = resolution else { return }
        let wait = resolutionBackoff.next()
        if endpoints.isEmpty {
            resolution = .failed(error, retryAt: now + wait)
            lastFailure = error
        } else {
            resolution = .resolved
        }
        if case .active = phase {
            if !endpoints.isEmpty, picksWaiting || configuration.loadBalancing.spreadsOverAddresses {
                connectAsNeeded(now: now, &actions)
            }
            actions.schedule.append((.resolution, now + min(wait, configuration.resolutionInterval)))
        }
        resolveAgainIfChanged(&actions)
        actions.wake = true
        finish(&actions)
    }

    /// A change came while the lookup that just ended was under way: its answer may predate it.
    private mutating func resolveAgainIfChanged(_ actions: inout Actions) {
        guard changedWhileResolving else { return }
        changedWhileResolving = false
        if case .active = phase { startResolution(&actions) }
    }

    // MARK: - Connections

    /// Attempt `attempt` of subchannel `id` connected.
    mutating func connected(_ id: Int, attempt: Int, _ connection: Connection, _ actions: inout Actions) {
        guard let index = index(of: id), case .connecting(attempt) = subchannels[index].state else {
            // The subchannel went away (closed, idle, addresses changed) while it connected.
            actions.close.append(connection)
            return
        }
        subchannels[index].state = .ready(attempt: attempt, connection)
        subchannels[index].backoff.reset()
        if let priority = subchannels[index].placement?.priority { connectingSince[priority] = nil }
        picksWaiting = false
        actions.wake = true
        finish(&actions)
    }

    /// Attempt `attempt` of subchannel `id` failed: back off, then try again (by timer).
    mutating func attemptFailed(
        _ id: Int,
        attempt: Int,
        _ error: TransportFailure,
        now: ContinuousClock.Instant,
        _ actions: inout Actions
    ) {
        guard let index = index(of: id), case .connecting(attempt) = subchannels[index].state else { return }
        let retryAt = now + subchannels[index].backoff.next()
        subchannels[index].state = .backingOff(error, retryAt: retryAt)
        lastFailure = error
        actions.schedule.append((.retry(subchannel: id), retryAt))
        resolveAgain(&actions)
        // Its priority may have failed as a whole: the next one connects.
        if tiered, case .active = phase { connectAsNeeded(now: now, &actions) }
        actions.wake = true
        finish(&actions)
    }

    /// The server sent GOAWAY on attempt `attempt`'s connection: it finishes its calls and
    /// closes; new calls go elsewhere.
    mutating func connectionDraining(_ id: Int, attempt: Int, _ actions: inout Actions) {
        guard let index = index(of: id), case .ready(attempt, _) = subchannels[index].state else { return }
        connectionEnded(at: index, lost: true, &actions)
        actions.wake = true
        finish(&actions)
    }

    /// Attempt `attempt`'s connection ended: lost (with an error) or closed in order (nil: its
    /// idle timeout, or the client closed it).
    mutating func connectionClosed(_ id: Int, attempt: Int, _ error: TransportFailure?, _ actions: inout Actions) {
        guard let index = index(of: id), case .ready(attempt, _) = subchannels[index].state else { return }
        connectionEnded(at: index, lost: error != nil, &actions)
        actions.wake = true
        finish(&actions)
    }

    /// A connection ended (`lost`: not by its idle timeout or the client). Round-robin keeps
    /// every address connected: it tries again at once and looks the name up again. Otherwise,
    /// with nothing else under way and no call waiting, the channel goes idle: the next call
    /// looks the name up afresh and connects.
    private mutating func connectionEnded(at index: Int, lost: Bool, _ actions: inout Actions) {
        subchannels[index].state = .idle
        guard case .active = phase else { return }
        if lost && configuration.loadBalancing.spreadsOverAddresses {
            resolveAgain(&actions)
            startAttempt(at: index, &actions)
        } else if !picksWaiting && subchannels.allSatisfy(\.isIdle) {
            enterIdle(&actions)
        } else if lost {
            resolveAgain(&actions)
        }
    }

    // MARK: - Timers

    mutating func timerFired(_ timer: Timer, now: ContinuousClock.Instant, _ actions: inout Actions) {
        guard case .active = phase else { return }
        switch timer {
        case .resolution:
            if case .failed(_, let retryAt) = resolution, retryAt > now { return }
            startResolution(&actions)
        case .failover:
            if tiered { connectAsNeeded(now: now, &actions) }
        case .retry(let id):
            guard let index = index(of: id), case .backingOff(_, let retryAt) = subchannels[index].state,
                retryAt <= now
            else { return }
            if let idleTimeout = configuration.idleTimeout, now - lastRequest >= idleTimeout,
                !subchannels.contains(where: { $0.connection != nil || $0.isConnecting })
            {
                // Nobody has asked for a connection for the idle timeout: stop trying.
                enterIdle(&actions)
            } else {
                startAttempt(at: index, &actions)
            }
        }
        finish(&actions)
    }

    // MARK: - Closing

    /// No more calls: ready connections close once their calls finish; attempts under way are
    /// closed when they connect.
    mutating func close(_ actions: inout Actions) {
        guard !isShutdown else { return }
        phase = .shutdown
        actions.close += subchannels.compactMap(\.connection)
        subchannels = []
        actions.cancelTimers = true
        actions.wake = true
        finish(&actions)
    }

    var isShutdown: Bool {
        if case .shutdown = phase { return true }
        return false
    }

    // MARK: - Decisions

    /// Starts the lookup and the attempts the channel needs now that something asked for a
    /// connection.
    private mutating func connectAsNeeded(now: ContinuousClock.Instant, _ actions: inout Actions) {
        if resolvesName {
            switch resolution {
            case .none:
                startResolution(&actions)
                // Pick-first connects to the fresh list; round-robin's subchannels keep their
                // address, so they may connect meanwhile.
                guard configuration.loadBalancing.spreadsOverAddresses else { return }
            case .resolving:
                guard configuration.loadBalancing.spreadsOverAddresses else { return }
            case .failed(_, let retryAt):
                if retryAt <= now { startResolution(&actions) }
                return
            case .resolved:
                break
            }
        }
        if subchannels.isEmpty { updateSubchannels(&actions) }
        let lastPriority = tiered ? lastPriorityToConnect(now: now, &actions) : Int.max
        for index in subchannels.indices where (subchannels[index].placement?.priority ?? 0) <= lastPriority {
            switch subchannels[index].state {
            case .idle:
                startAttempt(at: index, &actions)
            case .backingOff(_, let retryAt) where retryAt <= now:
                startAttempt(at: index, &actions)
            case .backingOff, .connecting, .ready:
                break
            }
        }
    }

    /// The first priority that has not failed, or the last one: every priority up to it
    /// connects. A priority has failed when each of its subchannels backs off, or when none is
    /// ready ``failoverTimeout`` after it began connecting (its timer is set here).
    private mutating func lastPriorityToConnect(now: ContinuousClock.Instant, _ actions: inout Actions) -> Int {
        var index = 0
        var priority = -1
        while index < subchannels.count {
            guard let current = subchannels[index].placement?.priority else { return .max }
            priority = current
            var ready = false
            var allBackingOff = true
            while index < subchannels.count, subchannels[index].placement?.priority == current {
                if subchannels[index].connection != nil { ready = true }
                if !subchannels[index].isBackingOff { allBackingOff = false }
                index += 1
            }
            if ready { return current }
            if allBackingOff { continue }
            guard let since = connectingSince[current] else {
                connectingSince[current] = now
                actions.schedule.append((.failover(priority: current), now + Self.failoverTimeout))
                return current
            }
            if now - since < Self.failoverTimeout { return current }
        }
        return priority
    }

    /// Fits the subchannels to `endpoints`: pick-first's one takes the new list (and leaves a
    /// connection whose address is no longer in it); round-robin keeps the subchannels whose
    /// endpoint remains, closes the others and adds one per new endpoint. (Only a name looked
    /// up directly changes its list, so its endpoints are addresses.)
    private mutating func updateSubchannels(_ actions: inout Actions) {
        guard !endpoints.isEmpty else { return }
        if !configuration.loadBalancing.spreadsOverAddresses {
            guard !subchannels.isEmpty else {
                subchannels = [makeSubchannel(endpoints)]
                return
            }
            subchannels[0].endpoints = endpoints
            if let connection = subchannels[0].connection, let peer = connection.remoteAddress,
                !endpoints.contains(.address(peer))
            {
                // Its calls finish; new ones go to a connection to the new list.
                actions.close.append(connection)
                startAttempt(at: 0, &actions)
            }
            return
        }
        var kept: [ChannelEndpoint: Subchannel<Connection>] = [:]
        for subchannel in subchannels {
            if endpoints.contains(subchannel.endpoints[0]) {
                kept[subchannel.endpoints[0]] = subchannel
            } else if let connection = subchannel.connection {
                actions.close.append(connection)
            }
        }
        subchannels = endpoints.map { kept[$0] ?? makeSubchannel([$0]) }
        for index in subchannels.indices { subchannels[index].placement = placements?[index] }
    }

    private mutating func makeSubchannel(_ endpoints: [ChannelEndpoint]) -> Subchannel<Connection> {
        nextID += 1
        return Subchannel(id: nextID, endpoints: endpoints, backoff: configuration.backoff)
    }

    private mutating func startAttempt(at index: Int, _ actions: inout Actions) {
        nextID += 1
        subchannels[index].state = .connecting(attempt: nextID)
        actions.connect.append(
            ConnectAttempt(
                subchannel: subchannels[index].id,
                attempt: nextID,
                endpoints: subchannels[index].endpoints,
                connectTimeout: subchannels[index].backoff.connectTimeout
            )
        )
    }

    private mutating func startResolution(_ actions: inout Actions) {
        guard resolvesName, !isResolving else { return }
        nextID += 1
        resolution = .resolving(id: nextID)
        actions.resolve = nextID
    }

    /// A connection ended or failed: its name may point elsewhere now.
    private mutating func resolveAgain(_ actions: inout Actions) {
        guard case .active = phase else { return }
        startResolution(&actions)
    }

    private var isResolving: Bool {
        if case .resolving = resolution { return true }
        return false
    }

    /// Nothing connected and nothing wanted: forget the subchannels (a name is looked up afresh
    /// when a call comes), stop every timer.
    private mutating func enterIdle(_ actions: inout Actions) {
        phase = .idle
        picksWaiting = false
        connectingSince = [:]
        actions.close += subchannels.compactMap(\.connection)
        if resolvesName {
            subchannels = []
            resolution = .none
        } else {
            subchannels = subchannels.map {
                var fresh = Subchannel<Connection>(id: $0.id, endpoints: $0.endpoints, backoff: configuration.backoff)
                fresh.placement = $0.placement
                return fresh
            }
        }
        resolutionBackoff.reset()
        actions.cancelTimers = true
        // A call still waiting (with waitForReady, longer than the idle timeout) asks again,
        // and so brings the channel back.
        actions.wake = true
    }

    /// The channel's state from its parts: ready when a connection is; connecting while an
    /// attempt (or the lookup a call waits for) is under way; transient failure when every
    /// subchannel backs off or the name cannot be resolved; else idle.
    private func aggregate() -> ConnectivityState {
        if case .shutdown = phase { return .shutdown }
        var backingOff = false
        var idle = false
        for subchannel in subchannels {
            switch subchannel.state {
            case .ready: return .ready
            case .connecting: return .connecting
            case .backingOff: backingOff = true
            case .idle: idle = true
            }
        }
        if case .idle = phase { return .idle }
        switch resolution {
        case .failed:
            return .transientFailure
        case .resolving where picksWaiting && !backingOff:
            return .connecting
        case .none, .resolving, .resolved:
            return backingOff && !idle ? .transientFailure : .idle
        }
    }

    /// After every event: the state to report, if it changed, and which connection's thread is
    /// home to the channel executor (kept while it is ready, else the first ready one).
    private mutating func finish(_ actions: inout Actions) {
        let now = aggregate()
        if now != state {
            state = now
            actions.publish = now
        }
        if let current = home, subchannels.contains(where: { $0.connection === current }) { return }
        let next = subchannels.lazy.compactMap(\.connection).first
        if let next {
            actions.home = .use(next)
        } else if let previous = home {
            actions.home = .leave(previous)
        }
        home = next
    }

    private func index(of id: Int) -> Int? {
        subchannels.firstIndex { $0.id == id }
    }

    /// The list without repeats, in its order (a hosts file may name an address twice).
    private static func unique(_ list: [ChannelEndpoint]) -> [ChannelEndpoint] {
        var seen = Set<ChannelEndpoint>()
        return list.filter { seen.insert($0).inserted }
    }

    /// The list without repeats (the first place of an endpoint named twice is kept), ordered by
    /// priority, then locality, keeping the resolver's order within a locality. Placements that
    /// do not match the list one for one are dropped: the endpoints are then equals.
    private static func unique(
        _ list: [ChannelEndpoint],
        _ placements: [ChannelResolution.Placement]?
    ) -> ([ChannelEndpoint], [ChannelResolution.Placement]?) {
        guard let placements, placements.count == list.count else { return (unique(list), nil) }
        var seen = Set<ChannelEndpoint>()
        let kept = zip(list, placements).enumerated().filter { seen.insert($0.element.0).inserted }
        let ordered = kept.sorted {
            ($0.element.1.priority, $0.element.1.locality, $0.offset)
                < ($1.element.1.priority, $1.element.1.locality, $1.offset)
        }
        return (ordered.map(\.element.0), ordered.map(\.element.1))
    }
}
