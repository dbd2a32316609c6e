/// Deadlines as poll(2) timeouts.
package enum PollTimeout {
    /// Milliseconds left before `deadline`, rounded up so that poll never wakes early: at least 1
    /// while any time is left, 0 once it has passed, and `Int32.max` for deadlines further away
    /// than poll can say (a keepalive interval of years, say).
    package static func milliseconds(until deadline: ContinuousClock.Instant) -> Int32 {
        let remaining = deadline - .now
        if remaining <= .zero { return 0 }
        if remaining >= .milliseconds(Int32.max) { return Int32.max }
        let (seconds, attoseconds) = remaining.components
        let millis = seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1
        return Int32(clamping: millis)
    }
}
