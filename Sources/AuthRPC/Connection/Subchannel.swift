import AuthRPCTransport

/// A connection as the channel's state machine sees it: an ``HTTP2Connection`` in the channel,
/// a stand-in in the state machine's tests.
protocol SubchannelConnection: AnyObject, Sendable {
    /// Whether new streams may start on it (no GOAWAY, not closing, not closed).
    var isAcceptingStreams: Bool { get }
    /// The address its socket reached (a proxy's, through a proxy).
    var remoteAddress: SocketAddress? { get }
}

extension HTTP2Connection: SubchannelConnection {}

/// One connection's worth of a channel: the endpoints it may go to (every one of the channel's
/// under pick-first, one under round-robin), where it stands, and its own reconnection backoff.
struct Subchannel<Connection: SubchannelConnection> {
    enum State {
        /// No connection and no attempt.
        case idle
        /// Attempt `attempt` is under way.
        case connecting(attempt: Int)
        /// Attempt `attempt` connected.
        case ready(attempt: Int, Connection)
        /// The last attempt failed with this error; the next is due at `retryAt`.
        case backingOff(TransportFailure, retryAt: ContinuousClock.Instant)
    }

    /// Stable for the subchannel's life, never reused within a channel.
    let id: Int
    var endpoints: [ChannelEndpoint]
    /// Its priority and locality, when the resolver balances its addresses as a tree.
    var placement: ChannelResolution.Placement?
    var state = State.idle {
        didSet {
            if case .ready(_, let ready) = state { connection = ready } else { connection = nil }
        }
    }
    /// The connection, when ready. Kept beside `state` so that each call's pick reads one
    /// reference, not a copy of the whole state (an error and its strings when backing off).
    private(set) var connection: Connection?
    var backoff: ConnectionBackoffState

    init(id: Int, endpoints: [ChannelEndpoint], backoff: ConnectionBackoff) {
        self.id = id
        self.endpoints = endpoints
        self.backoff = ConnectionBackoffState(backoff)
    }

    var isConnecting: Bool {
        if case .connecting = state { return true }
        return false
    }

    var isBackingOff: Bool {
        if case .backingOff = state { return true }
        return false
    }

    var isIdle: Bool {
        if case .idle = state { return true }
        return false
    }
}
