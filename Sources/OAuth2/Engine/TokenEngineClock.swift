package import AuthRPCSystem
package import Foundation

/// Where a ``TokenEngine`` reads the time and waits: the wall clock for the server's expiry
/// dates, the continuous clock for everything measured here (the same expiry carried over, so a
/// step of the wall clock cannot stretch it; the backoff; a token's age; the fetch watchdog).
/// Tests give the engine one they move by hand.
package struct TokenEngineClock: Sendable {
    /// The wall-clock time now.
    package var date: @Sendable () -> Date
    /// The continuous clock's time now.
    package var instant: @Sendable () -> ContinuousClock.Instant
    /// Returns once the continuous clock has moved on by the duration; throws when cancelled.
    package var sleep: @Sendable (Duration) async throws -> Void
    /// Both clocks now, as the fast path of a cached token compares them. Made with the clock
    /// from its `date` and `instant` (or, for ``system``, from the same clocks read directly):
    /// a clock whose `date` or `instant` is replaced afterwards needs a new `read` as well.
    package var read: @Sendable () -> Reading

    /// Both clocks at one moment, in plain numbers (``TokenFreshness/Bound``).
    package struct Reading: Sendable {
        /// The continuous clock.
        package var continuous: ContinuousTime
        /// The wall clock, in seconds since `Date`'s reference date.
        package var wall: Double
    }

    /// A clock reading `date` and `instant`, waiting with `sleep`.
    package init(
        date: @escaping @Sendable () -> Date,
        instant: @escaping @Sendable () -> ContinuousClock.Instant,
        sleep: @escaping @Sendable (Duration) async throws -> Void
    ) {
        self.init(date: date, instant: instant, sleep: sleep) {
            Reading(continuous: ContinuousTime(instant()), wall: date().timeIntervalSinceReferenceDate)
        }
    }

    private init(
        date: @escaping @Sendable () -> Date,
        instant: @escaping @Sendable () -> ContinuousClock.Instant,
        sleep: @escaping @Sendable (Duration) async throws -> Void,
        read: @escaping @Sendable () -> Reading
    ) {
        self.date = date
        self.instant = instant
        self.sleep = sleep
        self.read = read
    }

    /// The system's clocks. Its reading for the fast path takes the continuous clock as the
    /// connections' loops do (the clock `ContinuousClock` reads, without its resilient instant).
    package static let system = TokenEngineClock(
        date: { Date() },
        instant: { .now },
        sleep: { try await Task.sleep(for: $0, clock: .continuous) },
        read: { Reading(continuous: .now, wall: Date().timeIntervalSinceReferenceDate) }
    )
}
