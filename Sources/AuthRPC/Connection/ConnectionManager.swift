import AuthRPCSystem
import AuthRPCTransport
import Logging

/// Carries out a channel's connection management: resolver → load balancer → subchannels.
///
/// Every decision is the ``ChannelStateMachine``'s, taken under this manager's lock; the manager
/// does the I/O it asks for outside the lock: looks the name up (getaddrinfo on a thread of its
/// own), connects subchannels (each an ``HTTP2Connection`` with its own I/O thread), runs the
/// backoff and re-resolution timers, wakes waiting calls, reports connectivity states, and tells
/// the channel's executor which connection's thread to run jobs on.
///
/// A call with a ready connection takes one lock and reads no clock (``nextStep(waitForReady:)``);
/// everything else happens off its path.
final class ConnectionManager: Sendable {
    typealias Machine = ChannelStateMachine<HTTP2Connection>

    private struct Guarded {
        var machine: Machine
        /// The signal calls told to wait are waiting on; made when one first waits.
        var signal: ChangeSignal?
        var timers: [Machine.Timer: Task<Void, Never>] = [:]
        var watchers: [Int: AsyncStream<ConnectivityState>.Continuation] = [:]
        var nextWatcher = 0
    }

    let target: ChannelTarget
    /// The name TLS verifies and sends in SNI (unless the configuration overrides it).
    private let serverName: String
    private let configuration: HTTP2ConnectionConfiguration
    private let logger: Logger
    private let guarded: Locked<Guarded>
    /// Told which connection's thread runs the jobs of tasks that prefer the channel's executor.
    private let executor: ChannelExecutor
    /// The subchannels' connections, which ``shutdown()`` ends and waits for.
    private let connections = HTTP2ConnectionGroup()

    /// A manager for `target`, whose subchannels connect to `endpoints` (nil: the addresses
    /// the target's name is looked up to).
    init(
        target: ChannelTarget,
        endpoints: [ChannelEndpoint]?,
        serverName: String,
        configuration: HTTP2ConnectionConfiguration,
        machine: Machine.Configuration,
        executor: ChannelExecutor,
        logger: Logger
    ) {
        self.target = target
        self.serverName = serverName
        self.configuration = configuration
        self.executor = executor
        self.logger = logger
        guarded = Locked(Guarded(machine: Machine(configuration: machine, endpoints: endpoints)))
        if case .resolver(let resolver) = target.endpoint {
            resolver.observeChanges { [weak self] in
                self?.handle { machine, actions in machine.resolverChanged(&actions) }
            }
        }
    }

    /// What a call should do to get a connection.
    enum Step {
        /// Send on this connection: it takes new streams.
        case use(HTTP2Connection)
        /// Wait for the channel to change (``wait(for:deadline:)``), then ask again.
        case wait(ChangeSignal)
    }

    /// A ready connection (round-robin's next), or the signal to wait on while the channel
    /// connects. Throws `unavailable` (naming the cause) in transient failure unless
    /// `waitForReady`, and once the channel is closed.
    func nextStep(waitForReady: Bool) throws(RPCError) -> Step {
        if let connection = guarded.withLock({ $0.machine.pickReady() }) { return .use(connection) }
        return try slowStep(waitForReady: waitForReady)
    }

    @inline(never)
    private func slowStep(waitForReady: Bool) throws(RPCError) -> Step {
        var actions = Machine.Actions()
        let (pick, signal, effects) = guarded.withLock { guarded -> (Machine.Pick, ChangeSignal?, Effects) in
            let pick = guarded.machine.pick(waitForReady: waitForReady, now: .now, &actions)
            let effects = apply(actions, to: &guarded)
            guard case .wait = pick else { return (pick, nil, effects) }
            let signal = guarded.signal ?? ChangeSignal()
            guarded.signal = signal
            return (pick, signal, effects)
        }
        perform(actions, effects)
        switch pick {
        case .use(let connection):
            return .use(connection)
        case .wait:
            return .wait(signal!)
        case .fail(let error):
            throw RPCError(transportFailure: error, deadline: nil)
        case .closed:
            throw RPCError(code: .unavailable, message: "the channel is closed")
        }
    }

    /// Waits for the channel to change, until `deadline` or cancellation.
    // Never inlined: its frame (the race and its outcomes) exists only while connecting.
    @inline(never)
    nonisolated(nonsending) func wait(
        for signal: ChangeSignal,
        deadline: ContinuousClock.Instant?
    ) async throws(RPCError) {
        switch await race(deadline: deadline, { await signal.wait() }) {
        case .value:
            return
        case .deadlineExceeded:
            let failure = guarded.withLock { $0.machine.lastFailure }
            throw RPCError(
                code: .deadlineExceeded,
                message: "deadline exceeded while waiting for a connection to \(target)"
                    + (failure.map { " (last failure: \($0))" } ?? "")
            )
        case .cancelled:
            throw RPCError(code: .cancelled, message: "cancelled while waiting for a connection to \(target)")
        case .failed(let error):
            throw RPCError(code: .unavailable, message: "waiting for a connection to \(target) failed", cause: error)
        }
    }

    /// From now on a name is looked up again after `interval` (and no longer every 30 s).
    func setResolutionInterval(_ interval: Duration) {
        guarded.withLock { $0.machine.configuration.resolutionInterval = interval }
    }

    // MARK: - Connectivity

    /// The channel's state now.
    var state: ConnectivityState {
        guarded.withLock { $0.machine.state }
    }

    /// The current state, then every change, until shutdown.
    func states() -> AsyncStream<ConnectivityState> {
        let (stream, continuation) = AsyncStream.makeStream(of: ConnectivityState.self)
        let id = guarded.withLock { guarded -> Int in
            defer { guarded.nextWatcher += 1 }
            return guarded.nextWatcher
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.guarded.withLock { $0.watchers.removeValue(forKey: id) }
        }
        // Registered with the current state under the lock, so no change falls between them.
        let ended = guarded.withLock { guarded -> Bool in
            let state = guarded.machine.state
            if case .terminated = continuation.yield(state) { return false }
            if state == .shutdown { return true }
            guarded.watchers[id] = continuation
            return false
        }
        if ended { continuation.finish() }
        return stream
    }

    // MARK: - Events

    private func resolution(_ id: Int, finished result: Result<ChannelResolution, TransportFailure>) {
        switch result {
        case .success(let resolution):
            let addresses = resolution.addresses
            logger.debug(
                "resolved",
                metadata: [
                    "target": "\(target)", "addresses": "\(addresses.map(\.description).joined(separator: ", "))",
                ]
            )
            handle {
                $0.resolved(
                    id,
                    addresses.map(ChannelEndpoint.address),
                    placements: resolution.placements,
                    now: .now,
                    &$1
                )
            }
        case .failure(let error):
            logger.info("resolution failed", metadata: ["target": "\(target)", "error": "\(error)"])
            handle { $0.resolutionFailed(id, error, now: .now, &$1) }
        }
    }

    private func attempt(_ attempt: Machine.ConnectAttempt, finished result: Result<HTTP2Connection, TransportFailure>)
    {
        switch result {
        case .success(let connection):
            logger.debug(
                "connected",
                metadata: ["target": "\(target)", "address": "\(connection.remoteAddress?.description ?? "?")"]
            )
            handle { $0.connected(attempt.subchannel, attempt: attempt.attempt, connection, &$1) }
        case .failure(let error):
            logger.info("connection attempt failed", metadata: ["target": "\(target)", "error": "\(error)"])
            handle { $0.attemptFailed(attempt.subchannel, attempt: attempt.attempt, error, now: .now, &$1) }
        }
    }

    /// GOAWAY or the end of a connection (called on its I/O thread).
    private func connection(_ attempt: Machine.ConnectAttempt, reported event: HTTP2ConnectionEvent) {
        logger.debug("connection event", metadata: ["target": "\(target)", "event": "\(event)"])
        switch event {
        case .draining:
            handle { $0.connectionDraining(attempt.subchannel, attempt: attempt.attempt, &$1) }
        case .closed(let error):
            handle { $0.connectionClosed(attempt.subchannel, attempt: attempt.attempt, error, &$1) }
        }
    }

    private func timerFired(_ timer: Machine.Timer) {
        handle { $0.timerFired(timer, now: .now, &$1) }
    }

    /// No new calls; open calls finish, then the connections close.
    func close() {
        handle { $0.close(&$1) }
    }

    /// Connections started and not ended yet.
    var openConnectionCount: Int {
        connections.count
    }

    /// Closes, abandons the attempts under way, then waits until every subchannel's I/O thread
    /// has ended.
    func shutdown() async {
        close()
        await connections.closeAll()
    }

    /// Feeds the state machine one event and does what it answers.
    private func handle(_ event: (inout Machine, inout Machine.Actions) -> Void) {
        var actions = Machine.Actions()
        let effects = guarded.withLock { guarded -> Effects in
            event(&guarded.machine, &actions)
            return apply(actions, to: &guarded)
        }
        perform(actions, effects)
    }

    // MARK: - Actions

    /// What the lock's holder hands over to be done outside it.
    private struct Effects {
        var signal: ChangeSignal?
        var cancelled: [Task<Void, Never>] = []
        var finished: [AsyncStream<ConnectivityState>.Continuation] = []
    }

    /// The part of `actions` that must happen under the lock, in the order of events: states
    /// reported to the watchers, timers started and replaced, the executor's connection
    /// chosen, the signal to fire taken. (Starting a task or telling the executor takes no lock
    /// of this manager's.)
    private func apply(_ actions: Machine.Actions, to guarded: inout Guarded) -> Effects {
        var effects = Effects()
        if let state = actions.publish {
            for watcher in guarded.watchers.values { watcher.yield(state) }
            if state == .shutdown {
                effects.finished = Array(guarded.watchers.values)
                guarded.watchers = [:]
            }
        }
        if actions.cancelTimers {
            effects.cancelled = Array(guarded.timers.values)
            guarded.timers = [:]
        }
        // Announced under this lock, which also orders `close()`: `shutdown()` waits for them.
        for _ in actions.connect { connections.expectConnection() }
        for (timer, instant) in actions.schedule {
            let task = Task { [weak self] in
                try? await Task.sleep(until: instant, clock: .continuous)
                if !Task.isCancelled { self?.timerFired(timer) }
            }
            if let old = guarded.timers.updateValue(task, forKey: timer) { effects.cancelled.append(old) }
        }
        switch actions.home {
        case .use(let connection): executor.use(connection)
        case .leave(let previous): executor.stopUsing(previous)
        case nil: break
        }
        if actions.wake {
            effects.signal = guarded.signal
            guarded.signal = nil
        }
        return effects
    }

    private func perform(_ actions: Machine.Actions, _ effects: Effects) {
        for task in effects.cancelled { task.cancel() }
        for watcher in effects.finished { watcher.finish() }
        if let id = actions.resolve { resolve(id) }
        for attempt in actions.connect { connect(attempt) }
        for connection in actions.close { connection.close(graceful: true) }
        effects.signal?.fire()
    }

    /// Looks the name up on a thread of its own, which also hands the answer to the state
    /// machine: no task takes part, so a busy cooperative pool never delays a connection.
    private func resolve(_ id: Int) {
        if case .resolver(let resolver) = target.endpoint {
            Task { [weak self] in
                let result = await resolver.resolve()
                self?.resolution(id, finished: result)
            }
            return
        }
        // The machine resolves only a channel made with a name.
        guard case .name(let name) = target.endpoint else { return }
        logger.debug("resolving", metadata: ["target": "\(target)"])
        AddressResolver.resolveOffThread(name) { [weak self] result in
            self?.resolution(id, finished: result.map(ChannelResolution.init(addresses:)))
        }
    }

    private func connect(_ attempt: Machine.ConnectAttempt) {
        var configuration = self.configuration
        configuration.connectTimeout = attempt.connectTimeout
        let route = ConnectionRoute(attempt.endpoints)
        logger.debug(
            "connecting",
            metadata: ["target": "\(target)", "attempt": "\(attempt.attempt)", "route": "\(route)"]
        )
        // The answer comes on the connection's own thread.
        HTTP2Connection.start(
            via: route,
            serverName: serverName,
            configuration: configuration,
            onEvent: { [weak self] event in self?.connection(attempt, reported: event) },
            group: connections,
            completion: { [weak self] result in
                guard let self else {
                    if case .success(let connection) = result { connection.close() }
                    return
                }
                self.attempt(attempt, finished: result)
            }
        )
    }
}
