/// gRPC's connection backoff (connection-backoff.md): 1 s initial, ×1.6, ±20 % jitter, 120 s
/// cap, and at least 20 s for each connection attempt.
struct ConnectionBackoff: Sendable {
    static let initial: Duration = .seconds(1)
    static let multiplier = 1.6
    static let jitter = 0.2
    static let maximum: Duration = .seconds(120)
    static let minimumConnectTimeout: Duration = .seconds(20)

    private var current: Duration = ConnectionBackoff.initial

    /// The time an attempt may take: the current backoff, but never under the minimum.
    var connectTimeout: Duration { max(current, Self.minimumConnectTimeout) }

    /// The wait before the next attempt (jittered), then grows the backoff.
    mutating func next() -> Duration {
        let jittered = current * Double.random(in: (1 - Self.jitter)...(1 + Self.jitter))
        current = min(current * Self.multiplier, Self.maximum)
        return jittered
    }

    /// After a successful connection: start over.
    mutating func reset() {
        current = Self.initial
    }
}
