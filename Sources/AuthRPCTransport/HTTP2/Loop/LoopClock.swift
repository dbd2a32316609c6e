/// The connection loops' clock: instants as a `Duration`'s count of attoseconds since a fixed
/// instant of the process.
///
/// The loop reads and compares its timers several times a turn, and its deadline heap compares
/// deadlines at every sift. `ContinuousClock.Instant` is resilient, so outside the standard
/// library each copy, comparison and assignment of one is a call into the runtime, and a class
/// property holding one is checked for exclusive access at run time on every use. An instant is
/// therefore converted once, when it enters the loop (a request carries its deadline as a
/// `Duration` from the same ``origin``: see `HTTP2Request.deadline`), and the loop works on plain
/// integers. The integer is the one a `Duration` holds, so converting one is a read, not a
/// 128-bit division (which `Duration.components` would make).
enum LoopClock {
    /// The instant attosecond 0 stands for: the first reading of this clock in the process.
    static let origin = ContinuousClock.now

    /// Now, on this clock.
    static var now: LoopInstant { instant(ContinuousClock.now) }

    /// `instant` on this clock.
    static func instant(_ instant: ContinuousClock.Instant) -> LoopInstant {
        LoopInstant(sinceOrigin: instant - origin)
    }

    /// How long poll(2) may sleep from `now` to wake at `deadline`, in milliseconds rounded up
    /// so that it never wakes early: 0 once the deadline has passed, at least 1 while any time is
    /// left, and `Int32.max` for a deadline further away than poll can say.
    static func pollMilliseconds(from now: LoopInstant, until deadline: LoopInstant) -> Int32 {
        let remaining = deadline.attoseconds(since: now)
        if remaining <= 0 { return 0 }
        return Int32(clamping: remaining / 1_000_000_000_000_000 + 1)
    }
}

/// A point on the ``LoopClock``: attoseconds since its origin. Trivial to copy and compare.
struct LoopInstant: Comparable {
    var attoseconds: Int128

    init(attoseconds: Int128) {
        self.attoseconds = attoseconds
    }

    /// The instant `duration` after the clock's origin.
    init(sinceOrigin duration: Duration) {
        self.attoseconds = duration.attoseconds
    }

    static func < (lhs: LoopInstant, rhs: LoopInstant) -> Bool {
        lhs.attoseconds < rhs.attoseconds
    }

    /// This instant `attoseconds` later, saturating at the clock's bounds.
    func advanced(by attoseconds: Int128) -> LoopInstant {
        let (sum, overflow) = self.attoseconds.addingReportingOverflow(attoseconds)
        return LoopInstant(attoseconds: overflow ? (attoseconds < 0 ? .min : .max) : sum)
    }

    /// Attoseconds from `earlier` to this instant, saturating.
    func attoseconds(since earlier: LoopInstant) -> Int128 {
        let (difference, overflow) = attoseconds.subtractingReportingOverflow(earlier.attoseconds)
        return overflow ? (earlier.attoseconds < 0 ? .max : .min) : difference
    }
}
