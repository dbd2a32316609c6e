/// Stops a channel's retries while too many of its calls fail, so retries cannot multiply the load
/// on a server that is already failing (gRFC A6's `retryThrottling`).
///
/// The channel keeps a token count that starts at ``maxTokens``. Each attempt that fails with a
/// status its policy retries (or whose pushback says not to retry) takes one token; each call that
/// succeeds gives back ``tokenRatio``; the count stays between zero and ``maxTokens``. While the
/// count is at or below half of ``maxTokens`` no call is retried (the failing attempt's status is
/// the call's); once successes lift it above half, retries resume. Only calls with a
/// ``RetryPolicy`` take part. Transparent retries of requests the server never processed, and the
/// one retry after an `unauthenticated` answer, are not throttled.
public struct RetryThrottling: Sendable, Hashable {
    /// The most tokens the channel holds, and what it starts with. From 1 to 1000 (gRPC's range).
    public var maxTokens: Int

    /// The tokens a successful call gives back, greater than zero; counted in thousandths (as in
    /// gRPC), so 0.1 is 100 thousandths and any finer part is dropped (a ratio that rounds to
    /// zero thousandths is invalid).
    public var tokenRatio: Double

    /// Creates a throttling policy; see the properties for the ranges.
    public init(maxTokens: Int, tokenRatio: Double) {
        self.maxTokens = maxTokens
        self.tokenRatio = tokenRatio
    }

    /// What is wrong with this policy, or nil when a channel can use it.
    var problem: String? {
        if !(1...1000).contains(maxTokens) { return "maxTokens must be from 1 to 1000, not \(maxTokens)" }
        if !(tokenRatio.isFinite && tokenRatio > 0 && tokenRatio <= 1000) {
            return "tokenRatio must be greater than zero (and at most 1000), not \(tokenRatio)"
        }
        if Self.thousandths(tokenRatio) == 0 {
            return "tokenRatio must be at least 0.001 (it is counted in thousandths), not \(tokenRatio)"
        }
        return nil
    }

    /// `value` in whole thousandths, finer parts dropped.
    static func thousandths(_ value: Double) -> Int {
        Int((value * 1000).rounded(.towardZero))
    }
}
