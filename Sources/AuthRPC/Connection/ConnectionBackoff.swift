/// How a channel waits between connection attempts after one fails, as in gRPC's
/// connection-backoff.md: the first wait is `initial`, each later one `multiplier` times longer up
/// to `maximum`, every wait jittered by ±`jitter`, and a successful connection starts over. Each
/// of the channel's connections (one per address with round-robin) keeps its own place in the
/// policy and tries again by itself when its wait ends. While every connection waits, calls fail
/// fast with `unavailable`, naming the last failure, unless they set
/// ``CallOptions/waitForReady``. An attempt may take the current backoff, but never less than
/// `minimumConnectTimeout`. A name that does not resolve is looked up again after the same waits.
public struct ConnectionBackoff: Sendable, Hashable {
    /// The wait after the first failed attempt (gRPC: 1 s).
    public var initial: Duration
    /// How much longer each following wait is (gRPC: 1.6).
    public var multiplier: Double
    /// The relative randomness of every wait, from 0 to 1 (gRPC: 0.2, so ±20 %).
    public var jitter: Double
    /// The longest wait (gRPC: 120 s).
    public var maximum: Duration
    /// The shortest time a connection attempt is given (gRPC: 20 s).
    public var minimumConnectTimeout: Duration

    /// gRPC's defaults: 1 s, ×1.6, ±20 %, at most 120 s, attempts of at least 20 s.
    public static let `default` = ConnectionBackoff(
        initial: .seconds(1),
        multiplier: 1.6,
        jitter: 0.2,
        maximum: .seconds(120),
        minimumConnectTimeout: .seconds(20)
    )

    /// Creates a backoff policy; see the properties for the meaning (and gRPC's value) of each.
    public init(
        initial: Duration,
        multiplier: Double,
        jitter: Double,
        maximum: Duration,
        minimumConnectTimeout: Duration
    ) {
        self.initial = initial
        self.multiplier = multiplier
        self.jitter = jitter
        self.maximum = maximum
        self.minimumConnectTimeout = minimumConnectTimeout
    }

    /// What is wrong with this policy, or nil when a channel can use it.
    var problem: String? {
        if initial <= .zero || maximum <= .zero || minimumConnectTimeout <= .zero {
            return
                "initial, maximum and minimumConnectTimeout must be longer than zero (they are \(initial), \(maximum) and \(minimumConnectTimeout))"
        }
        if initial > maximum { return "initial (\(initial)) must not be longer than maximum (\(maximum))" }
        if !(multiplier >= 1 && multiplier <= 100) { return "multiplier must be from 1 to 100, not \(multiplier)" }
        if !(jitter >= 0 && jitter <= 1) { return "jitter must be from 0 to 1, not \(jitter)" }
        return nil
    }
}

/// One subchannel's (or the resolver's) place in its backoff policy.
struct ConnectionBackoffState: Sendable {
    let policy: ConnectionBackoff
    private var current: Duration

    init(_ policy: ConnectionBackoff) {
        // As with call timeouts, anything longer than 99,999,999 hours counts as that, which
        // keeps every product below far from overflowing.
        var policy = policy
        policy.initial = min(policy.initial, CallOptions.longestTimeout)
        policy.maximum = min(policy.maximum, CallOptions.longestTimeout)
        policy.minimumConnectTimeout = min(policy.minimumConnectTimeout, CallOptions.longestTimeout)
        self.policy = policy
        current = policy.initial
    }

    /// The time an attempt may take: the current backoff, but never under the minimum.
    var connectTimeout: Duration { max(current, policy.minimumConnectTimeout) }

    /// The wait before the next attempt (jittered), then grows the backoff.
    mutating func next() -> Duration {
        let jittered = current * Double.random(in: (1 - policy.jitter)...(1 + policy.jitter))
        current = min(current * policy.multiplier, policy.maximum)
        return jittered
    }

    /// After a successful connection: start over.
    mutating func reset() {
        current = policy.initial
    }
}
