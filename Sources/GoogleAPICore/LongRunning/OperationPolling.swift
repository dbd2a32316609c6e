/// How ``LongRunningOperation/waitUntilDone(polling:options:)`` spaces its polls: a first wait,
/// then each wait `multiplier` times the one before, up to `maxDelay`, until the operation is
/// done or `timeout` has passed.
///
/// The defaults are the ones googleapis gives client generators for long-running methods
/// (`google.api.MethodSettings.LongRunning` in `google/api/client.proto`): 5 seconds, times
/// 1.5, at most 45 seconds, 5 minutes in all.
public struct OperationPolling: Sendable, Hashable {
    /// The wait before the first poll. Default 5 seconds; must be zero or more.
    public var initialDelay: Duration
    /// What each wait is multiplied by for the next. Default 1.5; must be at least 1.
    public var multiplier: Double
    /// The longest wait between two polls. Default 45 seconds; must be at least `initialDelay`.
    public var maxDelay: Duration
    /// How long polling may go on, from the start of `waitUntilDone`, before it gives up with
    /// `deadlineExceeded` (the operation goes on on the server). Default 5 minutes; `nil` polls
    /// until the operation is done or the task is cancelled. A wait that would end past the
    /// timeout is cut short to end at it, for a last poll.
    public var timeout: Duration?

    /// googleapis' defaults: 5 s, times 1.5, at most 45 s, 5 minutes in all.
    public static let `default` = OperationPolling()

    /// Creates a policy; every parameter has the default described on its property.
    public init(
        initialDelay: Duration = .seconds(5),
        multiplier: Double = 1.5,
        maxDelay: Duration = .seconds(45),
        timeout: Duration? = .seconds(300)
    ) {
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maxDelay = maxDelay
        self.timeout = timeout
    }

    /// The wait before poll number `poll` (0 for the first): `initialDelay × multiplierᵖᵒˡˡ`,
    /// at most `maxDelay`.
    public func delay(beforePoll poll: Int) -> Duration {
        var delay = initialDelay
        for _ in 0..<max(poll, 0) {
            delay = delay * multiplier
            if delay >= maxDelay { return maxDelay }
        }
        return min(delay, maxDelay)
    }

    /// What is wrong with the policy, or `nil` when it can be used.
    var problem: String? {
        if initialDelay < .zero { return "initialDelay must not be negative" }
        if !(multiplier >= 1) || !multiplier.isFinite { return "multiplier must be a finite number of at least 1" }
        if maxDelay < initialDelay { return "maxDelay must be at least initialDelay" }
        if let timeout, timeout < .zero { return "timeout must not be negative" }
        return nil
    }
}
