/// Where a channel stands with its connections, as gRPC defines the states
/// (connectivity-semantics-and-api.md). ``Channel/connectivityStates`` reports every change.
public enum ConnectivityState: Sendable, Hashable, CustomStringConvertible {
    /// No connection and none being made: before the first call, after ``Channel``'s idle
    /// timeout closed an unused connection, and (with pick-first) after the connection ended.
    /// The next call connects.
    case idle
    /// Looking up the target's name or connecting; calls wait.
    case connecting
    /// At least one connection takes calls.
    case ready
    /// The last attempts failed and every connection waits for its backoff to end before the
    /// next one; calls fail at once with `unavailable` (naming the cause) unless they set
    /// ``CallOptions/waitForReady``.
    case transientFailure
    /// The channel was closed: calls fail with `unavailable`. It is the last state.
    case shutdown

    /// gRPC's name for the state: `IDLE`, `CONNECTING`, `READY`, `TRANSIENT_FAILURE`, `SHUTDOWN`.
    public var description: String {
        switch self {
        case .idle: "IDLE"
        case .connecting: "CONNECTING"
        case .ready: "READY"
        case .transientFailure: "TRANSIENT_FAILURE"
        case .shutdown: "SHUTDOWN"
        }
    }
}
