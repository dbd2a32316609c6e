import AuthRPCSystem

/// A channel's retry token count (``RetryThrottling``), in thousandths of a token as in gRPC, so
/// a ratio such as 0.1 adds up exactly.
final class RetryThrottle: Sendable {
    private let maxTokens: Int
    private let ratio: Int
    private let tokens: Locked<Int>

    init(_ policy: RetryThrottling) {
        maxTokens = policy.maxTokens * 1000
        ratio = RetryThrottling.thousandths(policy.tokenRatio)
        tokens = Locked(maxTokens)
    }

    /// A call with a retry policy succeeded: gives back `tokenRatio`, up to the maximum.
    func recordSuccess() {
        let (maxTokens, ratio) = (self.maxTokens, self.ratio)
        tokens.withLock { $0 = min($0 + ratio, maxTokens) }
    }

    /// An attempt failed in a way its policy retries: takes a token and answers whether retries
    /// are still allowed (the count is above half the maximum).
    func recordFailure() -> Bool {
        let maxTokens = self.maxTokens
        return tokens.withLock { tokens in
            tokens = max(tokens - 1000, 0)
            return tokens * 2 > maxTokens
        }
    }

    /// The count now, in thousandths (for tests).
    var thousandths: Int { tokens.withLock { $0 } }
}
