/// How ``ComputeEngineTokenSource`` retries a metadata request that failed in a way that may pass,
/// as google-auth does: no answer (the server could not be reached, the request timed out) or
/// HTTP 408, 429, 500, 503 or 504.
///
/// Each retry waits ``initialBackoff`` doubled per attempt (1 s, 2 s, 4 s, 8 s by default), with
/// up to 10 % taken off or added at random so that instances restarted together do not retry in
/// step. At most ``attempts`` requests are made, and never past ``maximumDuration`` from the
/// first: a wait that would end later is not begun, and each request's timeout is cut to what is
/// left. A cancelled task stops at once. Nothing else is retried: an answer without
/// `Metadata-Flavor: Google` (not a metadata server), 404 (no such account) and other refusals
/// fail on the first answer.
///
/// The fetch runs in a task of its own, shared by every call waiting for the token, so a call's
/// deadline ends that call's wait, not the fetch; ``maximumDuration`` is what bounds the fetch.
public struct MetadataRetry: Sendable, Hashable {
    /// How many requests at most, the first included (at least 1).
    public let attempts: Int
    /// The wait before the first retry; each later one doubles it.
    public let initialBackoff: Duration
    /// How long all the attempts and waits may take together.
    public let maximumDuration: Duration

    /// Five attempts, 1 s before the first retry, 30 s in all (google-auth makes five attempts
    /// with the same backoff).
    public static let standard = MetadataRetry()

    /// One attempt: every failure is reported at once.
    public static let never = MetadataRetry(attempts: 1)

    /// A policy of `attempts` requests, `initialBackoff` before the first retry, all within
    /// `maximumDuration`. `attempts` below 1 counts as 1; negative durations as zero.
    public init(attempts: Int = 5, initialBackoff: Duration = .seconds(1), maximumDuration: Duration = .seconds(30)) {
        self.attempts = max(attempts, 1)
        self.initialBackoff = max(initialBackoff, .zero)
        self.maximumDuration = max(maximumDuration, .zero)
    }

    /// Whether an answer with HTTP `status` is worth asking again for (google-auth's list).
    static func isRetryable(status: Int) -> Bool {
        [408, 429, 500, 503, 504].contains(status)
    }

    /// How long to wait after attempt `attempt` (1 for the first) failed in a way worth retrying,
    /// `elapsed` after the first began; `nil` when no attempt is left or the wait would end past
    /// ``maximumDuration``. `jitter` in -1...1 moves the wait by up to 10 %.
    func wait(afterAttempt attempt: Int, elapsed: Duration, jitter: Double) -> Duration? {
        guard attempt < attempts else { return nil }
        let doublings = min(attempt - 1, 30)
        let base = initialBackoff * (1 << doublings)
        let wait = base * (1 + 0.1 * min(max(jitter, -1), 1))
        guard elapsed + wait < maximumDuration else { return nil }
        return wait
    }

    /// The timeout for a request begun `elapsed` after the first: `requestTimeout`, cut to what is
    /// left of ``maximumDuration``.
    func timeout(_ requestTimeout: Duration, elapsed: Duration) -> Duration {
        max(min(requestTimeout, maximumDuration - elapsed), .zero)
    }
}
