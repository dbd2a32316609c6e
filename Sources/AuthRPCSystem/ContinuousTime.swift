#if canImport(Glibc)
import Glibc
#endif

/// A reading of `ContinuousClock` as whole nanoseconds since the clock's own epoch
/// (`ContinuousClock.systemEpoch`): one 64-bit integer, about 292 years of range.
///
/// A call reads the clock when it starts and again for its `grpc-timeout`, each connection's
/// loop reads it once a turn, and the loop's deadline heap compares deadlines at every sift.
/// `ContinuousClock.Instant` is resilient outside the standard library, so each reading, copy,
/// comparison and subtraction of one is a call into the runtime, and its `Duration` is a 128-bit
/// count of attoseconds. On Linux, ``now`` reads the very clock `ContinuousClock` reads
/// (`CLOCK_BOOTTIME`), so the two agree to the nanosecond; elsewhere it asks `ContinuousClock`.
///
/// Arithmetic saturates: ``distantFuture`` stands for any time beyond the range, so a deadline
/// too far away to count never fires. The small operations are inlinable: the loop and the
/// call path are in other modules, and each would otherwise be a call.
package struct ContinuousTime: Comparable, Hashable, Sendable {
    /// Nanoseconds since `ContinuousClock`'s epoch.
    package var nanoseconds: Int64

    @inlinable
    package init(nanoseconds: Int64) {
        self.nanoseconds = nanoseconds
    }

    /// The latest time there is: where deadlines too far away to count end up.
    package static let distantFuture = ContinuousTime(nanoseconds: .max)

    /// Now.
    package static var now: ContinuousTime {
        #if os(Linux)
        var reading = timespec()
        // Cannot fail: the clock exists on every kernel Swift runs on, and the pointer is valid.
        _ = clock_gettime(CLOCK_BOOTTIME, &reading)
        return ContinuousTime(nanoseconds: Int64(reading.tv_sec) &* 1_000_000_000 &+ Int64(reading.tv_nsec))
        #else
        let sinceEpoch = ContinuousClock.now - ContinuousClock().systemEpoch
        return ContinuousTime(nanoseconds: Int64(clamping: sinceEpoch.attoseconds / 1_000_000_000))
        #endif
    }

    /// `instant`, rounded up to a whole nanosecond so that a deadline converted never comes early.
    package init(_ instant: ContinuousClock.Instant) {
        self.init(nanoseconds: Self.nanoseconds(roundingUp: instant - ContinuousClock().systemEpoch))
    }

    /// This time as a `ContinuousClock` instant.
    package var instant: ContinuousClock.Instant {
        ContinuousClock().systemEpoch + .nanoseconds(nanoseconds)
    }

    /// `duration` in whole nanoseconds, rounded toward the future (a remainder of one attosecond
    /// counts as a whole nanosecond) and clamped to `Int64`'s range.
    package static func nanoseconds(roundingUp duration: Duration) -> Int64 {
        let attoseconds = duration.attoseconds
        let whole = attoseconds / 1_000_000_000
        return Int64(clamping: attoseconds % 1_000_000_000 > 0 ? whole + 1 : whole)
    }

    /// This time `nanoseconds` later (earlier when negative), saturating at the range's ends.
    @inlinable
    package func advanced(by nanoseconds: Int64) -> ContinuousTime {
        let (sum, overflow) = self.nanoseconds.addingReportingOverflow(nanoseconds)
        return ContinuousTime(nanoseconds: overflow ? (nanoseconds < 0 ? .min : .max) : sum)
    }

    /// Nanoseconds from `earlier` to this time, saturating.
    @inlinable
    package func nanoseconds(since earlier: ContinuousTime) -> Int64 {
        let (difference, overflow) = nanoseconds.subtractingReportingOverflow(earlier.nanoseconds)
        return overflow ? (earlier.nanoseconds < 0 ? .max : .min) : difference
    }

    @inlinable
    package static func < (lhs: ContinuousTime, rhs: ContinuousTime) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }

    @inlinable
    package static func == (lhs: ContinuousTime, rhs: ContinuousTime) -> Bool {
        lhs.nanoseconds == rhs.nanoseconds
    }
}
