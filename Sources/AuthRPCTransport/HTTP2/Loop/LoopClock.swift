import AuthRPCSystem

/// The connection loops' clock: ``ContinuousTime``, a plain integer of nanoseconds on
/// `ContinuousClock`'s own timeline.
///
/// The loop reads the clock once a turn and compares its timers several times a turn, and its
/// deadline heap compares deadlines at every sift: on integers, none of it calls into the runtime
/// (`ContinuousClock.Instant` is resilient, and its `Duration` is 128 bits). A request carries its
/// deadline as a `ContinuousTime` already (see `HTTP2Request.deadline`).
enum LoopClock {
    /// How long poll(2) may sleep from `now` to wake at `deadline`, in milliseconds rounded up
    /// so that it never wakes early: 0 once the deadline has passed, at least 1 while any time is
    /// left, and `Int32.max` for a deadline further away than poll can say.
    static func pollMilliseconds(from now: ContinuousTime, until deadline: ContinuousTime) -> Int32 {
        let remaining = deadline.nanoseconds(since: now)
        if remaining <= 0 { return 0 }
        return Int32(clamping: remaining / 1_000_000 + 1)
    }
}
