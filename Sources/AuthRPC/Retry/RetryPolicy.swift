/// When and how a failed call is sent again, as gRPC's retry design (gRFC A6) defines it.
///
/// A call governed by a policy is made at most ``maxAttempts`` times. After an attempt fails with
/// one of ``retryableStatusCodes``, the next one waits a random time from zero to the current
/// backoff (A6's "full jitter"): ``initialBackoff`` before the first retry, ``backoffMultiplier``
/// times longer before each following one, never more than ``maxBackoff``. Every retry carries
/// `grpc-previous-rpc-attempts: N` (the attempts before it).
///
/// What stops retrying, whatever the policy says:
/// - the call is *committed*: the server sent response headers (a status alone, in a
///   Trailers-Only response, does not commit it);
/// - the server's `grpc-retry-pushback-ms` trailer is negative or does not parse (a value of zero
///   or more is waited exactly instead of the backoff, and the backoff then starts over);
/// - the channel's ``RetryThrottling`` has run low on tokens;
/// - the call's deadline (one for all attempts) would pass before the next attempt starts: the
///   call then fails with the last attempt's status rather than waiting;
/// - the caller cancelled.
///
/// The request is serialized once and the same bytes are sent by every attempt; each attempt
/// resolves the call's token again (a provider's cached token costs nothing), so a token that
/// expired during the backoff is not sent. Independently of any policy, a request the server
/// cannot have processed is retried transparently, and an `unauthenticated` answer to an
/// ``InvalidatableAuthTokenProvider``'s token once with a fresh token
/// (``CallOptions/retriesUnauthenticatedOnce``); neither counts against ``maxAttempts``.
///
/// Only methods that are safe to run more than once on the server should be given codes other
/// than `unavailable` (and `unavailable` only when the server does not half-process requests).
public struct RetryPolicy: Sendable, Hashable {
    /// How many times the call may be made, the first attempt included: 2 through 5, where values
    /// above 5 count as 5 (gRPC's client-side limit, which also guards configs from elsewhere).
    /// 1 makes a single attempt: ``RetryPolicy/disabled`` uses it to turn off the retries a
    /// service config gives a method. Zero or less fails the call with `invalidArgument` before
    /// anything is sent.
    public var maxAttempts: Int

    /// The most the wait before the first retry may be (the wait is random, from zero up to it).
    /// Must be longer than zero.
    public var initialBackoff: Duration

    /// The most any wait may be, however many retries came before. Must be longer than zero.
    public var maxBackoff: Duration

    /// How much the bound on the wait grows from one retry to the next: the n-th retry waits up to
    /// `min(initialBackoff × backoffMultiplier^(n−1), maxBackoff)`. Must be greater than zero
    /// (and finite); 1 keeps every bound at ``initialBackoff``.
    public var backoffMultiplier: Double

    /// The statuses that make a retry worth trying. Must not be empty when ``maxAttempts`` is more
    /// than 1, and must not contain `ok`.
    public var retryableStatusCodes: Set<StatusCode>

    /// Creates a policy; see each property for what it means and what it may be.
    ///
    /// - Parameters:
    ///   - maxAttempts: Attempts in all, the first included (2 to 5; more counts as 5).
    ///   - initialBackoff: The bound on the wait before the first retry.
    ///   - maxBackoff: The bound no wait exceeds.
    ///   - backoffMultiplier: How much the bound grows per retry.
    ///   - retryableStatusCodes: The statuses worth retrying; `unavailable` alone by default.
    public init(
        maxAttempts: Int,
        initialBackoff: Duration,
        maxBackoff: Duration,
        backoffMultiplier: Double,
        retryableStatusCodes: Set<StatusCode> = [.unavailable]
    ) {
        self.maxAttempts = maxAttempts
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
        self.backoffMultiplier = backoffMultiplier
        self.retryableStatusCodes = retryableStatusCodes
    }

    /// One attempt only: set it as a call's ``CallOptions/retryPolicy`` to make no retries where a
    /// service config would.
    public static let disabled = RetryPolicy(
        maxAttempts: 1,
        initialBackoff: .seconds(1),
        maxBackoff: .seconds(1),
        backoffMultiplier: 1,
        retryableStatusCodes: []
    )

    /// gRPC's client-side limit on ``maxAttempts``.
    static let attemptLimit = 5

    /// The attempts a call makes at most: ``maxAttempts`` up to ``attemptLimit``.
    var attemptBound: Int { min(maxAttempts, Self.attemptLimit) }

    /// What is wrong with this policy, or nil when a call can use it.
    var problem: String? {
        if maxAttempts < 1 { return "maxAttempts must be at least 1, not \(maxAttempts)" }
        if initialBackoff <= .zero { return "initialBackoff must be longer than zero, not \(initialBackoff)" }
        if maxBackoff <= .zero { return "maxBackoff must be longer than zero, not \(maxBackoff)" }
        if !(backoffMultiplier > 0 && backoffMultiplier.isFinite) {
            return "backoffMultiplier must be greater than zero, not \(backoffMultiplier)"
        }
        if maxAttempts > 1 && retryableStatusCodes.isEmpty { return "retryableStatusCodes must not be empty" }
        if retryableStatusCodes.contains(.ok) { return "retryableStatusCodes must not contain OK" }
        return nil
    }

    /// The bound on the wait before retry `retry` (1 for the first retry):
    /// `min(initialBackoff × backoffMultiplier^(retry−1), maxBackoff)`.
    func backoffBound(beforeRetry retry: Int) -> Duration {
        let initial = Self.seconds(initialBackoff)
        let bound = initial * pow(backoffMultiplier, retry - 1)
        let maximum = Self.seconds(maxBackoff)
        // NaN or infinity (a huge multiplier) also ends at the maximum.
        return bound < maximum ? .seconds(bound) : maxBackoff
    }

    /// A wait drawn uniformly from zero to ``backoffBound(beforeRetry:)``.
    func backoff(beforeRetry retry: Int, using generator: inout some RandomNumberGenerator) -> Duration {
        let bound = Self.seconds(backoffBound(beforeRetry: retry))
        guard bound > 0 else { return .zero }
        return .seconds(Double.random(in: 0...bound, using: &generator))
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }

    /// `base` to the power `exponent` (a small non-negative integer), without Foundation.
    private func pow(_ base: Double, _ exponent: Int) -> Double {
        var result = 1.0
        for _ in 0..<max(exponent, 0) { result *= base }
        return result
    }
}
