import AuthRPCSystem
import Foundation
import Testing

@testable import OAuth2

/// The engine's fast path answers a cached token from `freshUntil` and one clock reading in plain
/// numbers; it must say "fresh" exactly where the full verdict does, on each clock alone.
@Suite("TokenFreshness.Bound")
struct TokenFreshnessBoundTests {
    private let issued = Date(timeIntervalSince1970: 1_700_000_000)
    private let start = ContinuousClock.now

    /// A 3600 s token judged at `issued`/`start`, with a 60 s margin and `staleWindow`.
    private func freshness(staleWindow: Duration, expires: Bool = true) -> TokenFreshness {
        TokenFreshness(
            issuedAt: issued,
            expiresAt: expires ? issued.addingTimeInterval(3600) : nil,
            tolerance: .seconds(60),
            staleWindow: staleWindow,
            date: issued,
            instant: start
        )
    }

    private func reading(wall: Duration, continuous: Duration) -> TokenEngineClock.Reading {
        TokenEngineClock.Reading(
            continuous: ContinuousTime(start + continuous),
            wall: issued.addingTimeInterval(wall.seconds).timeIntervalSinceReferenceDate
        )
    }

    @Test("the bound is the stale moment, or the expiry without a stale phase, or none without an expiry")
    func boundIsTheFirstMomentThatIsNotFresh() throws {
        let stale = try #require(freshness(staleWindow: .seconds(225)).freshUntil)
        #expect(stale.wall == issued.addingTimeInterval(3375).timeIntervalSinceReferenceDate)
        #expect(stale.continuous == ContinuousTime(start + .seconds(3375)))
        let expiring = try #require(freshness(staleWindow: .zero).freshUntil)
        #expect(expiring.wall == issued.addingTimeInterval(3540).timeIntervalSinceReferenceDate)
        #expect(freshness(staleWindow: .seconds(225), expires: false).freshUntil == nil)
    }

    @Test("setting either moment keeps the bound in step")
    func boundFollowsTheMoments() throws {
        var judged = freshness(staleWindow: .seconds(225))
        let expiry = try #require(judged.expiresAt)
        judged.staleAt = nil
        #expect(judged.freshUntil?.wall == expiry.date.timeIntervalSinceReferenceDate)
        judged.expiresAt = nil
        #expect(judged.freshUntil == nil)
        judged.staleAt = expiry
        #expect(judged.freshUntil?.continuous == ContinuousTime(expiry.instant))
    }

    @Test("ahead of the bound exactly where the verdict is fresh, whichever clock reaches it first")
    func fastPathAgreesWithTheVerdict() throws {
        for window in [Duration.seconds(225), .zero] {
            let judged = freshness(staleWindow: window)
            let bound = try #require(judged.freshUntil)
            let limit: Int64 = window == .zero ? 3540 : 3375
            for seconds in [0, limit - 1, limit, limit + 1] {
                let at = Duration.seconds(seconds)
                let late = Duration.seconds(limit + 5)
                // Both clocks together, the wall clock alone ahead, the continuous clock alone ahead.
                for (wall, continuous) in [(at, at), (late, at), (at, late)] {
                    let now = reading(wall: wall, continuous: continuous)
                    let verdict = judged.verdict(
                        date: issued.addingTimeInterval(wall.seconds),
                        instant: start + continuous
                    )
                    #expect(bound.isAhead(of: now) == (verdict == .fresh), "window \(window), \(wall), \(continuous)")
                }
            }
        }
    }

    @Test("the system clock's reading is the clocks' own, in plain numbers")
    func systemReadingMatchesTheClocks() {
        let before = (date: Date(), instant: ContinuousClock.now)
        let reading = TokenEngineClock.system.read()
        let after = (date: Date(), instant: ContinuousClock.now)
        #expect(reading.wall >= before.date.timeIntervalSinceReferenceDate)
        #expect(reading.wall <= after.date.timeIntervalSinceReferenceDate)
        // `ContinuousTime(_:)` rounds an instant up to a whole nanosecond.
        #expect(reading.continuous.nanoseconds >= ContinuousTime(before.instant).nanoseconds - 1)
        #expect(reading.continuous <= ContinuousTime(after.instant))
    }
}
