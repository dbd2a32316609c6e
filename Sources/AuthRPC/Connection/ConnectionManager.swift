import AuthRPCSystem
import HTTP2Client
import Logging

/// Keeps a channel's one HTTP/2 connection: connects lazily on the first call, shares one
/// connection attempt among every caller waiting for it, replaces the connection after GOAWAY or
/// loss, and after a failed attempt fails calls fast (`unavailable`, naming the cause) until the
/// backoff allows another attempt.
final class ConnectionManager: Sendable {
    private enum State {
        case idle
        case connecting(generation: Int, attempt: Task<Result<HTTP2Connection, HTTP2Error>, Never>)
        case ready(generation: Int, connection: HTTP2Connection)
        case transientFailure(HTTP2Error, retryAt: ContinuousClock.Instant)
        case closed
    }

    private struct Guarded {
        var state = State.idle
        var backoff: ConnectionBackoffState
        var generation = 0
    }

    private let target: HTTP2Target
    /// How connections reach `target`: resolving it, or through a proxy.
    private let route: HTTP2Route
    private let configuration: HTTP2ConnectionConfiguration
    private let logger: Logger
    private let guarded: Locked<Guarded>
    /// Told which connection's thread runs the jobs of tasks that prefer the channel's executor.
    private let executor: ChannelExecutor

    init(
        target: HTTP2Target,
        route: HTTP2Route,
        configuration: HTTP2ConnectionConfiguration,
        backoff: ConnectionBackoff,
        executor: ChannelExecutor,
        logger: Logger
    ) {
        self.target = target
        self.route = route
        self.executor = executor
        self.configuration = configuration
        self.logger = logger
        guarded = Locked(Guarded(backoff: ConnectionBackoffState(backoff)))
    }

    /// What a caller should do to get a connection.
    enum Step {
        /// Use this one: it takes new streams.
        case use(HTTP2Connection)
        /// Wait for this attempt (``wait(for:deadline:)``).
        case wait(Task<Result<HTTP2Connection, HTTP2Error>, Never>)
    }

    /// A connection that takes new streams, or the attempt to wait for (started now when there is
    /// none). Fails fast (`unavailable`, naming the cause) during the backoff after a failed
    /// attempt, and once the channel is closed.
    func nextStep() throws(RPCError) -> Step {
        try guarded.withLock { guarded throws(RPCError) -> Step in
            switch guarded.state {
            case .ready(_, let connection) where connection.isAcceptingStreams:
                return .use(connection)
            case .connecting(_, let attempt):
                return .wait(attempt)
            case .transientFailure(let error, let retryAt) where ContinuousClock.now < retryAt:
                throw RPCError(transportFailure: error, deadline: nil)
            case .closed:
                throw RPCError(code: .unavailable, message: "the channel is closed")
            case .idle, .ready, .transientFailure:
                return .wait(startAttempt(&guarded))
            }
        }
    }

    /// Waits for a connection attempt, until `deadline` or cancellation; the attempt itself goes
    /// on for the next callers.
    // Never inlined: its frame (the race and its outcomes) exists only while connecting.
    @inline(never)
    nonisolated(nonsending) func wait(
        for attempt: Task<Result<HTTP2Connection, HTTP2Error>, Never>,
        deadline: ContinuousClock.Instant?
    ) async throws(RPCError) -> HTTP2Connection {
        switch await race(deadline: deadline, { await attempt.value }) {
        case .value(.success(let connection)):
            return connection
        case .value(.failure(let error)):
            throw RPCError(transportFailure: error, deadline: deadline)
        case .deadlineExceeded:
            throw RPCError(code: .deadlineExceeded, message: "deadline exceeded while connecting to \(target)")
        case .cancelled:
            throw RPCError(code: .cancelled, message: "cancelled while connecting to \(target)")
        case .failed(let error):
            throw RPCError(code: .unavailable, message: "connecting to \(target) failed", cause: error)
        }
    }

    /// Starts a connection attempt; called with the lock held.
    private func startAttempt(_ guarded: inout Guarded) -> Task<Result<HTTP2Connection, HTTP2Error>, Never> {
        guarded.generation += 1
        let generation = guarded.generation
        var configuration = self.configuration
        configuration.connectTimeout = guarded.backoff.connectTimeout
        let target = self.target
        let route = self.route
        logger.debug("connecting", metadata: ["route": "\(route)", "attempt": "\(generation)"])
        let attempt = Task { [weak self] () -> Result<HTTP2Connection, HTTP2Error> in
            do throws(HTTP2Error) {
                let connection = try await HTTP2Connection.connect(
                    via: route,
                    serverName: target.host,
                    configuration: configuration
                ) { [weak self] event in
                    self?.connection(generation, reported: event)
                }
                self?.attemptSucceeded(generation, connection)
                return .success(connection)
            } catch {
                self?.attemptFailed(generation, error)
                return .failure(error)
            }
        }
        guarded.state = .connecting(generation: generation, attempt: attempt)
        return attempt
    }

    private func attemptSucceeded(_ generation: Int, _ connection: HTTP2Connection) {
        let keep = guarded.withLock { guarded -> Bool in
            guard case .connecting(generation, _) = guarded.state else { return false }
            guarded.state = .ready(generation: generation, connection: connection)
            guarded.backoff.reset()
            return true
        }
        if keep {
            executor.use(connection)
            logger.debug("connected", metadata: ["target": "\(target)"])
        } else {
            // The channel closed while this attempt ran.
            connection.close()
        }
    }

    private func attemptFailed(_ generation: Int, _ error: HTTP2Error) {
        guarded.withLock { guarded in
            guard case .connecting(generation, _) = guarded.state else { return }
            let wait = guarded.backoff.next()
            guarded.state = .transientFailure(error, retryAt: .now + wait)
            logger.info(
                "connection attempt failed",
                metadata: ["target": "\(target)", "error": "\(error)", "retry-in": "\(wait)"]
            )
        }
    }

    /// GOAWAY or loss on the current connection: the next call makes a new one.
    private func connection(_ generation: Int, reported event: HTTP2ConnectionEvent) {
        let ended = guarded.withLock { guarded -> HTTP2Connection? in
            guard case .ready(generation, let connection) = guarded.state else { return nil }
            guarded.state = .idle
            return connection
        }
        if let ended { executor.stopUsing(ended) }
        logger.debug("connection ended", metadata: ["target": "\(target)", "event": "\(event)"])
    }

    /// No new calls; open calls finish, then the connection closes.
    func close() {
        let connection = guarded.withLock { guarded -> HTTP2Connection? in
            defer { guarded.state = .closed }
            if case .ready(_, let connection) = guarded.state { return connection }
            return nil
        }
        executor.stopUsing(nil)
        connection?.close(graceful: true)
    }
}
