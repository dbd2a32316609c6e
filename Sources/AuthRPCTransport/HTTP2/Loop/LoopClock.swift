/// The connection loops' clock: instants as whole nanoseconds since a fixed instant of the
/// process.
///
/// The loop reads and compares its timers several times a turn, and its deadline heap compares
/// deadlines at every sift. `ContinuousClock.Instant` is resilient, so outside the standard
/// library each copy, comparison and assignment of one is a call into the runtime, and a class
/// property holding one is checked for exclusive access at run time on every use. An instant is
/// therefore converted once, when it enters the loop (a request carries its deadline as a
/// `Duration` from the same ``origin``: see `HTTP2Request.deadline`), and the loop works on plain
/// integers.
enum LoopClock {
    /// The instant nanosecond 0 stands for: the first reading of this clock in the process.
    static let origin = ContinuousClock.now

    /// Now, on this clock.
    static var now: LoopInstant { instant(ContinuousClock.now) }

    /// `instant` on this clock; instants more than 292 years from the origin saturate.
    static func instant(_ instant: ContinuousClock.Instant) -> LoopInstant {
        self.instant(sinceOrigin: instant - origin)
    }

    /// The instant `duration` after ``origin``.
    static func instant(sinceOrigin duration: Duration) -> LoopInstant {
        LoopInstant(nanoseconds: nanoseconds(duration))
    }

    /// `duration` in whole nanoseconds (truncated toward zero), saturating at `Int64`'s bounds.
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflowSum) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        if overflowSum { return seconds < 0 ? .min : .max }
        return sum
    }

    /// How long poll(2) may sleep from `now` to wake at `deadline`, in milliseconds rounded up
    /// so that it never wakes early: 0 once the deadline has passed, at least 1 while any time is
    /// left, and `Int32.max` for a deadline further away than poll can say.
    static func pollMilliseconds(from now: LoopInstant, until deadline: LoopInstant) -> Int32 {
        let remaining = deadline.nanoseconds.subtractingReportingOverflow(now.nanoseconds)
        if remaining.overflow { return deadline > now ? .max : 0 }
        if remaining.partialValue <= 0 { return 0 }
        return Int32(clamping: remaining.partialValue / 1_000_000 + 1)
    }
}

/// A point on a ``LoopClock``: nanoseconds since its origin. Trivial to copy and compare.
struct LoopInstant: Comparable {
    var nanoseconds: Int64

    static func < (lhs: LoopInstant, rhs: LoopInstant) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }

    /// This instant `nanoseconds` later, saturating at the clock's bounds.
    func advanced(by nanoseconds: Int64) -> LoopInstant {
        let (sum, overflow) = self.nanoseconds.addingReportingOverflow(nanoseconds)
        return LoopInstant(nanoseconds: overflow ? (nanoseconds < 0 ? .min : .max) : sum)
    }

    /// Nanoseconds from `earlier` to this instant, saturating.
    func nanoseconds(since earlier: LoopInstant) -> Int64 {
        let (difference, overflow) = nanoseconds.subtractingReportingOverflow(earlier.nanoseconds)
        return overflow ? (earlier.nanoseconds < 0 ? .max : .min) : difference
    }
}
