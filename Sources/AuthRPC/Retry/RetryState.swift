/// One call's place in its ``RetryPolicy``: after each failed attempt, whether and when the next
/// one starts. A value with no I/O; the call loop acts on its decisions.
struct RetryState: Sendable {
    /// Attempts counted against the policy so far (the first included, once it is under way).
    private(set) var attempts = 1
    /// Retries since the backoff last started over (a pushback to retry starts it over).
    private(set) var backoffStep = 0

    /// Why no retry follows a failed attempt.
    enum StopReason: Sendable, Equatable, CustomStringConvertible {
        case statusNotRetryable
        case throttled
        case committed
        case attemptsExhausted
        case pushbackSaysStop
        case deadlineTooClose

        var description: String {
            switch self {
            case .statusNotRetryable: "the status is not one the policy retries"
            case .throttled: "retries are throttled (too many recent failures)"
            case .committed: "the server had sent response headers (the call is committed)"
            case .attemptsExhausted: "no attempts left"
            case .pushbackSaysStop: "the server's grpc-retry-pushback-ms asks not to retry"
            case .deadlineTooClose: "the deadline would pass before the next attempt"
            }
        }
    }

    /// What follows a failed attempt.
    enum Decision: Sendable, Equatable {
        /// Start the next attempt after this wait.
        case retry(after: Duration)
        /// The attempt's failure is the call's.
        case stop(StopReason)
    }

    /// Decides what follows an attempt that failed with `code`, in gRPC's order: a status the
    /// policy does not retry ends it (unless a pushback says stop, nothing is counted); otherwise
    /// the failure takes a throttling token, then commitment, the attempt limit, the pushback and
    /// the deadline are checked in turn. A retry's wait is the pushback's when there is one
    /// (which also starts the backoff over), else a random one within the policy's bound.
    mutating func decide(
        after code: StatusCode,
        committed: Bool,
        pushback: RetryPushback?,
        policy: RetryPolicy,
        throttle: RetryThrottle?,
        now: ContinuousClock.Instant,
        deadline: ContinuousClock.Instant?,
        using generator: inout some RandomNumberGenerator
    ) -> Decision {
        guard policy.retryableStatusCodes.contains(code) else {
            // A6: a pushback that says stop counts as a failure for throttling even then.
            if pushback == .stop { _ = throttle?.recordFailure() }
            return .stop(.statusNotRetryable)
        }
        if let throttle, !throttle.recordFailure() { return .stop(.throttled) }
        if committed { return .stop(.committed) }
        guard attempts < policy.attemptBound else { return .stop(.attemptsExhausted) }
        let wait: Duration
        switch pushback {
        case .stop?:
            return .stop(.pushbackSaysStop)
        case .retryAfter(let pushed)?:
            wait = pushed
            backoffStep = 0
        case nil:
            backoffStep += 1
            wait = policy.backoff(beforeRetry: backoffStep, using: &generator)
        }
        if let deadline, now + wait >= deadline { return .stop(.deadlineTooClose) }
        attempts += 1
        return .retry(after: wait)
    }
}
