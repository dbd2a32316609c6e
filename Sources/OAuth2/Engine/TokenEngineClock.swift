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

    /// A clock reading `date` and `instant`, waiting with `sleep`.
    package init(
        date: @escaping @Sendable () -> Date,
        instant: @escaping @Sendable () -> ContinuousClock.Instant,
        sleep: @escaping @Sendable (Duration) async throws -> Void
    ) {
        self.date = date
        self.instant = instant
        self.sleep = sleep
    }

    /// The system's clocks.
    package static let system = TokenEngineClock(
        date: { Date() },
        instant: { .now },
        sleep: { try await Task.sleep(for: $0, clock: .continuous) }
    )
}
