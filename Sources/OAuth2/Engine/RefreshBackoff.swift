import Foundation

/// How long an ``AuthSession`` waits before asking the token endpoint again after a transient
/// failure (the network, a 5xx, an unusable answer).
///
/// Without it, while the issuer fails fast, every call on a stale token would start a new refresh
/// (and take the store's file lock). With it, the n-th failure in a row waits
/// `initial × multiplier^(n-1)`, at most `maximum`, each wait stretched or shrunk at random by up
/// to `jitter` (so processes that failed together do not retry together); meanwhile token requests
/// fail at once with the last transient error. A successful refresh, or a new state, starts over.
/// The defaults follow gRPC's connection backoff: 1 s, ×1.6, ±20 %, here at most a minute.
public struct RefreshBackoff: Sendable, Hashable {
    /// The wait after the first failure.
    public var initial: Duration
    /// How much each further failure multiplies the wait (at least 1).
    public var multiplier: Double
    /// The longest wait.
    public var maximum: Duration
    /// The random spread of each wait, as a fraction (0...1): 0.2 means ±20 %.
    public var jitter: Double

    /// Creates a backoff; out-of-range values are brought into range (`multiplier` at least 1,
    /// `jitter` within 0...1, durations within zero and a day, `maximum` at least `initial`).
    public init(
        initial: Duration = .seconds(1),
        multiplier: Double = 1.6,
        maximum: Duration = .seconds(60),
        jitter: Double = 0.2
    ) {
        let day = Duration.seconds(86_400)
        self.initial = min(day, max(.zero, initial))
        self.multiplier = multiplier.isFinite ? max(1, multiplier) : 1
        self.maximum = min(day, max(self.initial, maximum))
        self.jitter = jitter.isFinite ? min(1, max(0, jitter)) : 0
    }

    /// gRPC-like defaults: 1 s, ×1.6, at most 60 s, ±20 %.
    public static let `default` = RefreshBackoff()

    /// No waiting: every token request after a failure asks the token endpoint again.
    public static let none = RefreshBackoff(initial: .zero, multiplier: 1, maximum: .zero, jitter: 0)

    /// The wait after `failures` failures in a row (at least 1), jitter applied.
    func delay<Random: RandomNumberGenerator>(afterFailures failures: Int, using random: inout Random) -> Duration {
        let base = min(maximum.seconds, initial.seconds * pow(multiplier, Double(min(max(failures, 1) - 1, 64))))
        let spread = jitter > 0 ? Double.random(in: (1 - jitter)...(1 + jitter), using: &random) : 1
        return .milliseconds(Int64((min(maximum.seconds, base * spread) * 1000).rounded()))
    }
}

/// The failures a session is backing off from.
struct RefreshBackoffState {
    /// Failures in a row.
    var failures: Int
    /// Until when token requests fail fast.
    var until: ContinuousClock.Instant
    /// The last transient error, handed out meanwhile.
    var error: OAuthError
}
