/// How long the ADS client waits before it connects again after a stream failed (gRPC's
/// connection backoff: 1 s, ×1.6 per attempt, at most 120 s, ±20 % jitter).
struct XDSADSBackoff: Sendable {
    var initial: Duration = .seconds(1)
    var multiplier = 1.6
    var maximum: Duration = .seconds(120)
    var jitter = 0.2

    /// The wait before attempt `attempt` (0 after a stream that worked).
    func delay(attempt: Int) -> Duration {
        var delay = initial
        for _ in 0..<min(attempt, 64) where delay < maximum {
            delay = min(delay * multiplier, maximum)
        }
        return delay * Double.random(in: (1 - jitter)...(1 + jitter))
    }
}
