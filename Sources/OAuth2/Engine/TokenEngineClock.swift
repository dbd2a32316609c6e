package import Foundation

/// Where a ``TokenEngine`` reads the time: the wall clock for freshness (a token expires at a
/// date the server gave), the continuous clock for the backoff (a wait that a change of the
/// wall clock must not stretch or cut). Tests give the engine one they move by hand.
package struct TokenEngineClock: Sendable {
    /// The wall-clock time now.
    package var date: @Sendable () -> Date
    /// The continuous clock's time now.
    package var instant: @Sendable () -> ContinuousClock.Instant

    /// A clock reading `date` and `instant`.
    package init(date: @escaping @Sendable () -> Date, instant: @escaping @Sendable () -> ContinuousClock.Instant) {
        self.date = date
        self.instant = instant
    }

    /// The system's clocks.
    package static let system = TokenEngineClock(date: { Date() }, instant: { .now })
}
