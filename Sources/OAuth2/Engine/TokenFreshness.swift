package import AuthRPCSystem
package import Foundation

/// When a held token turns stale (still handed out, but refreshed in the background) and when it
/// expires (no longer handed out), on the wall clock and on the continuous clock at once.
///
/// The wall clock says when the server's expiry comes; the continuous clock carries the same
/// remaining lifetime, measured when the token was taken in, so a step of the wall clock
/// backwards (an NTP correction, a VM restored from a snapshot) cannot keep an expired token in
/// use. A moment has passed as soon as either clock says so.
package struct TokenFreshness: Sendable, Equatable {
    /// What a token is worth at one moment.
    package enum Verdict: Sendable, Equatable {
        /// Hand it out.
        case fresh
        /// Hand it out, and have it refreshed in the background.
        case stale
        /// Do not hand it out: refresh first.
        case expired
    }

    /// A moment on both clocks.
    ///
    /// The continuous clock's side is kept as an offset from a fixed instant of the process:
    /// `ContinuousClock.Instant` is resilient, so a struct holding one (and the engine's state
    /// around it) is copied and compared through the runtime's generic value witnesses, on the
    /// fast path of every call that reads a cached token. A `Duration` is a plain value.
    package struct Moment: Sendable, Equatable {
        package var date: Date
        /// The continuous clock's moment, as its distance from ``origin``.
        var offset: Duration

        /// The instant every ``offset`` counts from.
        static let origin = ContinuousClock.now

        /// The moment on the continuous clock.
        package var instant: ContinuousClock.Instant {
            get { Self.origin + offset }
            set { offset = newValue - Self.origin }
        }

        package init(date: Date, instant: ContinuousClock.Instant) {
            self.date = date
            self.offset = instant - Self.origin
        }

        /// Whether the moment has passed by either clock; `offset` is now's ``offset``.
        func hasPassed(date now: Date, offset nowOffset: Duration) -> Bool {
            now >= date || nowOffset >= offset
        }
    }

    /// The first moment the token stops being fresh, as the engine's fast path compares it: the
    /// continuous clock as a ``ContinuousTime`` and the wall clock as `Date`'s seconds, plain
    /// numbers, where a `ContinuousClock.Instant` goes through the runtime at every copy and
    /// comparison.
    package struct Bound: Sendable, Equatable {
        /// The moment on the continuous clock.
        package var continuous: ContinuousTime
        /// The moment on the wall clock, in seconds since `Date`'s reference date.
        package var wall: Double

        /// Whether `reading` comes before the bound on both clocks: nothing has passed.
        @inlinable
        package func isAhead(of reading: TokenEngineClock.Reading) -> Bool {
            reading.continuous < continuous && reading.wall < wall
        }
    }

    /// When the token turns stale; `nil` when it never does before it expires (or never expires).
    package var staleAt: Moment? {
        didSet { freshUntil = Self.bound(staleAt, expiresAt) }
    }
    /// When the token expires (the expiry minus ``ExpiryMargin``); `nil` without a known expiry.
    package var expiresAt: Moment? {
        didSet { freshUntil = Self.bound(staleAt, expiresAt) }
    }
    /// ``staleAt``, or ``expiresAt`` without a stale phase: until then ``verdict(date:instant:)``
    /// answers `fresh`; `nil` when it always does. Kept in step with both.
    package private(set) var freshUntil: Bound?

    /// The freshness of a token issued at `issuedAt` that expires at `expiresAt`, read at `date`
    /// on the wall clock and `instant` on the continuous clock.
    ///
    /// - Parameters:
    ///   - tolerance: The expiry margin (``ExpiryMargin``): the token expires this long before
    ///     the server's expiry (at most half its lifetime).
    ///   - staleWindow: How long before the server's expiry the token turns stale (at most half
    ///     its lifetime). A window no longer than the margin leaves no stale phase.
    package init(
        issuedAt: Date?,
        expiresAt: Date?,
        tolerance: Duration,
        staleWindow: Duration,
        date: Date,
        instant: ContinuousClock.Instant
    ) {
        func moment(_ at: Date) -> Moment {
            // The same remaining lifetime on the continuous clock; a moment already passed stays passed.
            Moment(
                date: at,
                instant: instant + .milliseconds(Int64((max(-1, at.timeIntervalSince(date)) * 1000).rounded()))
            )
        }
        guard
            let usableUntil = ExpiryMargin.freshUntil(issuedAt: issuedAt, expiresAt: expiresAt, tolerance: tolerance)
        else { return }
        self.expiresAt = moment(usableUntil)
        if let staleFrom = ExpiryMargin.freshUntil(issuedAt: issuedAt, expiresAt: expiresAt, tolerance: staleWindow),
            staleFrom < usableUntil
        {
            staleAt = moment(staleFrom)
        }
        // Observers do not run in an initializer.
        freshUntil = Self.bound(staleAt, self.expiresAt)
    }

    /// The first of the two moments that is set, as a ``Bound``: the stale moment comes before the
    /// expiry on both clocks, and a moment passes once either clock reaches it
    /// (`Moment.hasPassed`).
    private static func bound(_ staleAt: Moment?, _ expiresAt: Moment?) -> Bound? {
        guard let first = staleAt ?? expiresAt else { return nil }
        return Bound(continuous: ContinuousTime(first.instant), wall: first.date.timeIntervalSinceReferenceDate)
    }

    /// What the token is worth at `date` (wall clock) and `instant` (continuous clock).
    package func verdict(date: Date, instant: ContinuousClock.Instant) -> Verdict {
        guard expiresAt != nil || staleAt != nil else { return .fresh }
        let offset = instant - Moment.origin
        if let expiresAt, expiresAt.hasPassed(date: date, offset: offset) { return .expired }
        if let staleAt, staleAt.hasPassed(date: date, offset: offset) { return .stale }
        return .fresh
    }
}
