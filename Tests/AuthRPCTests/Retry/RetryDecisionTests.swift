import Testing

@testable import AuthRPC

/// The retry policy's decisions, without I/O: backoff bounds, the order of gRFC A6's checks,
/// pushback parsing and throttling.
@Suite("Retry decisions (gRFC A6)")
struct RetryDecisionTests {
    /// The wait of a retry decision, nil for a stop.
    private func wait(_ decision: RetryState.Decision) -> Duration? {
        if case .retry(let wait) = decision { return wait }
        return nil
    }

    let policy = RetryPolicy(
        maxAttempts: 4,
        initialBackoff: .milliseconds(100),
        maxBackoff: .milliseconds(300),
        backoffMultiplier: 2,
        retryableStatusCodes: [.unavailable, .resourceExhausted]
    )

    @Test("the n-th retry waits up to min(initial x multiplier^(n-1), max)")
    func backoffBounds() {
        #expect(policy.backoffBound(beforeRetry: 1) == .milliseconds(100))
        #expect(policy.backoffBound(beforeRetry: 2) == .milliseconds(200))
        #expect(policy.backoffBound(beforeRetry: 3) == .milliseconds(300))
        #expect(policy.backoffBound(beforeRetry: 4) == .milliseconds(300))
        var huge = policy
        huge.backoffMultiplier = 1e308
        #expect(huge.backoffBound(beforeRetry: 4) == .milliseconds(300))
    }

    @Test("each wait is drawn from zero up to its bound")
    func backoffIsJittered() {
        var system = SystemRandomNumberGenerator()
        for retry in 1...4 {
            let bound = policy.backoffBound(beforeRetry: retry)
            var longest = Duration.zero
            for _ in 0..<500 {
                let wait = policy.backoff(beforeRetry: retry, using: &system)
                #expect(wait >= .zero && wait <= bound)
                longest = max(longest, wait)
            }
            // 500 uniform draws all in the lower half: a chance of 2^-500.
            #expect(longest > bound / 2)
        }
    }

    private func decide(
        _ state: inout RetryState,
        _ code: StatusCode = .unavailable,
        committed: Bool = false,
        pushback: RetryPushback? = nil,
        policy: RetryPolicy? = nil,
        throttle: RetryThrottle? = nil,
        deadline: ContinuousClock.Instant? = nil,
        now: ContinuousClock.Instant = .now
    ) -> RetryState.Decision {
        var generator = SplitMix64(seed: 0x9E37_79B9_7F4A_7C15)
        return state.decide(
            after: code,
            committed: committed,
            pushback: pushback,
            policy: policy ?? self.policy,
            throttle: throttle,
            now: now,
            deadline: deadline,
            using: &generator
        )
    }

    @Test("retryable failures are retried until maxAttempts")
    func attemptsAndBackoff() {
        var state = RetryState()
        #expect(wait(decide(&state)).map { $0 <= .milliseconds(100) } == true)
        #expect(wait(decide(&state, .resourceExhausted)).map { $0 <= .milliseconds(200) } == true)
        #expect(wait(decide(&state)).map { $0 <= .milliseconds(300) } == true)
        #expect(state.attempts == 4)
        #expect(decide(&state) == .stop(.attemptsExhausted))
    }

    @Test("maxAttempts above 5 counts as 5")
    func attemptLimit() {
        var many = policy
        many.maxAttempts = 100
        var state = RetryState()
        var retries = 0
        while case .retry = decide(&state, policy: many) { retries += 1 }
        #expect(retries == 4)
        #expect(state.attempts == 5)
    }

    @Test("a status the policy does not list, or OK, is not retried")
    func notRetryable() {
        var state = RetryState()
        #expect(decide(&state, .invalidArgument) == .stop(.statusNotRetryable))
        #expect(decide(&state, .internalError) == .stop(.statusNotRetryable))
        #expect(state.attempts == 1)
    }

    @Test("a committed call (headers received) is never retried")
    func committed() {
        var state = RetryState()
        #expect(decide(&state, committed: true) == .stop(.committed))
    }

    @Test("pushback: a value is waited exactly and starts the backoff over; negative or malformed stops")
    func pushback() {
        var state = RetryState()
        #expect(wait(decide(&state)) != nil)
        #expect(wait(decide(&state)) != nil)
        #expect(state.backoffStep == 2)
        #expect(decide(&state, pushback: .retryAfter(.milliseconds(1234))) == .retry(after: .milliseconds(1234)))
        // The next backoff starts again from initialBackoff.
        #expect(state.backoffStep == 0)
        #expect(decide(&state) == .stop(.attemptsExhausted))
        var stopped = RetryState()
        #expect(decide(&stopped, pushback: .stop) == .stop(.pushbackSaysStop))
        // Pushback does not make a non-retryable status retryable.
        var other = RetryState()
        #expect(decide(&other, .invalidArgument, pushback: .retryAfter(.milliseconds(5))) == .stop(.statusNotRetryable))
    }

    @Test("grpc-retry-pushback-ms parses as a signed 32-bit number of milliseconds; anything else stops")
    func pushbackParsing() {
        #expect(RetryPushback(parsing: "0") == .retryAfter(.zero))
        #expect(RetryPushback(parsing: "500") == .retryAfter(.milliseconds(500)))
        #expect(RetryPushback(parsing: "2147483647") == .retryAfter(.milliseconds(2_147_483_647)))
        for text in ["-1", "-500", "", "-", "abc", "1.5", " 5", "5 ", "+5", "2147483648", "99999999999", "0x10", "５"] {
            #expect(RetryPushback(parsing: text) == .stop, "\(text)")
        }
        var trailers = Metadata()
        #expect(RetryPushback(trailers) == nil)
        trailers.addString("250", forKey: "grpc-retry-pushback-ms")
        trailers.addString("-1", forKey: "grpc-retry-pushback-ms")
        #expect(RetryPushback(trailers) == .retryAfter(.milliseconds(250)))
    }

    @Test("no retry whose wait would reach the deadline")
    func deadline() {
        let now = ContinuousClock.now
        var state = RetryState()
        #expect(
            decide(&state, pushback: .retryAfter(.milliseconds(100)), deadline: now + .milliseconds(100), now: now)
                == .stop(.deadlineTooClose)
        )
        var roomy = RetryState()
        #expect(
            decide(&roomy, pushback: .retryAfter(.milliseconds(100)), deadline: now + .milliseconds(101), now: now)
                == .retry(after: .milliseconds(100))
        )
        var pushed = RetryState()
        #expect(
            decide(&pushed, pushback: .retryAfter(.seconds(5)), deadline: now + .seconds(1), now: now)
                == .stop(.deadlineTooClose)
        )
    }

    @Test("throttling: failures take a token, successes give back tokenRatio, retries only above half")
    func throttling() {
        let throttle = RetryThrottle(RetryThrottling(maxTokens: 4, tokenRatio: 0.5))
        #expect(throttle.thousandths == 4000)
        var first = RetryState()
        #expect(wait(decide(&first, throttle: throttle)) != nil)  // 3 left
        #expect(decide(&first, throttle: throttle) == .stop(.throttled))  // 2 left: not above half
        #expect(throttle.thousandths == 2000)
        var second = RetryState()
        #expect(decide(&second, throttle: throttle) == .stop(.throttled))  // 1 left
        // A non-retryable status takes no token.
        #expect(decide(&second, .invalidArgument, throttle: throttle) == .stop(.statusNotRetryable))
        #expect(throttle.thousandths == 1000)
        for _ in 0..<4 { throttle.recordSuccess() }  // 3
        var third = RetryState()
        #expect(decide(&third, throttle: throttle) == .stop(.throttled))  // 2
        for _ in 0..<2 { throttle.recordSuccess() }  // 3
        var fourth = RetryState()
        throttle.recordSuccess()  // 3.5
        #expect(wait(decide(&fourth, throttle: throttle)) != nil)  // 2.5 > 2
        // Never below zero, never above maxTokens.
        for _ in 0..<10 { _ = throttle.recordFailure() }
        #expect(throttle.thousandths == 0)
        for _ in 0..<100 { throttle.recordSuccess() }
        #expect(throttle.thousandths == 4000)
    }

    @Test("tokenRatio counts in thousandths, finer parts dropped")
    func tokenRatioPrecision() {
        let throttle = RetryThrottle(RetryThrottling(maxTokens: 10, tokenRatio: 0.1239))
        for _ in 0..<10 { _ = throttle.recordFailure() }
        throttle.recordSuccess()
        #expect(throttle.thousandths == 123)
        #expect(RetryThrottling(maxTokens: 10, tokenRatio: 0.0004).problem != nil)
        #expect(RetryThrottling(maxTokens: 0, tokenRatio: 1).problem != nil)
        #expect(RetryThrottling(maxTokens: 1001, tokenRatio: 1).problem != nil)
        #expect(RetryThrottling(maxTokens: 1000, tokenRatio: 0.001).problem == nil)
    }

    @Test("a policy's problems are named")
    func policyProblems() {
        #expect(policy.problem == nil)
        #expect(RetryPolicy.disabled.problem == nil)
        var bad = policy
        bad.maxAttempts = 0
        #expect(bad.problem?.contains("maxAttempts") == true)
        bad = policy
        bad.initialBackoff = .zero
        #expect(bad.problem?.contains("initialBackoff") == true)
        bad = policy
        bad.maxBackoff = .milliseconds(-1)
        #expect(bad.problem?.contains("maxBackoff") == true)
        bad = policy
        bad.backoffMultiplier = .nan
        #expect(bad.problem?.contains("backoffMultiplier") == true)
        bad = policy
        bad.retryableStatusCodes = []
        #expect(bad.problem?.contains("retryableStatusCodes") == true)
        bad = policy
        bad.retryableStatusCodes = [.ok, .unavailable]
        #expect(bad.problem?.contains("OK") == true)
    }
}
