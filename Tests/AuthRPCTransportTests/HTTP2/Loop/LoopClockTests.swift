import Testing

@testable import AuthRPCTransport

/// The loop's integer clock: conversions from the standard library's, saturation, poll timeouts.
@Suite("Loop clock")
struct LoopClockTests {
    @Test("durations become whole nanoseconds, truncated toward zero, saturating past 292 years")
    func nanoseconds() {
        #expect(LoopClock.nanoseconds(.seconds(2)) == 2_000_000_000)
        #expect(LoopClock.nanoseconds(.milliseconds(-1_500)) == -1_500_000_000)
        #expect(LoopClock.nanoseconds(.nanoseconds(7) + Duration(secondsComponent: 0, attosecondsComponent: 999)) == 7)
        #expect(LoopClock.nanoseconds(Duration(secondsComponent: 0, attosecondsComponent: -999_999_999)) == 0)
        #expect(LoopClock.nanoseconds(.seconds(Int64.max)) == .max)
        #expect(LoopClock.nanoseconds(.seconds(Int64.min)) == .min)
        #expect(LoopClock.nanoseconds(.seconds(9_223_372_036) + .seconds(1)) == .max)
    }

    @Test("instants are counted from the clock's origin, either side of it, as requests carry them")
    func instants() {
        let origin = LoopClock.origin
        #expect(LoopClock.instant(origin) == LoopInstant(nanoseconds: 0))
        #expect(LoopClock.instant(origin + .milliseconds(5)) == LoopInstant(nanoseconds: 5_000_000))
        #expect(LoopClock.instant(origin - .seconds(1)) == LoopInstant(nanoseconds: -1_000_000_000))
        #expect(LoopClock.now >= LoopInstant(nanoseconds: 0))

        let deadline = origin + .milliseconds(250)
        var request = HTTP2Request(headerBlock: HTTP2HeaderBlock(), body: [], deadline: deadline)
        #expect(request.deadline == deadline)
        #expect(
            request.deadlineSinceOrigin.map(LoopClock.instant(sinceOrigin:)) == LoopInstant(nanoseconds: 250_000_000)
        )
        request.deadline = nil
        #expect(request.deadline == nil && request.deadlineSinceOrigin == nil)
    }

    @Test("poll never wakes early: 0 once due, whole milliseconds rounded up, Int32.max when too far")
    func pollMilliseconds() {
        let now = LoopInstant(nanoseconds: 1_000)
        func wait(_ nanoseconds: Int64) -> Int32 {
            LoopClock.pollMilliseconds(from: now, until: now.advanced(by: nanoseconds))
        }
        #expect(wait(-5) == 0)
        #expect(wait(0) == 0)
        #expect(wait(1) == 1)
        #expect(wait(999_999) == 1)
        #expect(wait(1_000_000) == 2)
        #expect(wait(2_500_000) == 3)
        #expect(wait(Int64(Int32.max) * 1_000_000) == .max)
        #expect(
            LoopClock.pollMilliseconds(from: LoopInstant(nanoseconds: .min), until: LoopInstant(nanoseconds: .max))
                == .max
        )
        #expect(
            LoopClock.pollMilliseconds(from: LoopInstant(nanoseconds: .max), until: LoopInstant(nanoseconds: .min)) == 0
        )
    }

    @Test("arithmetic on instants saturates instead of trapping")
    func saturation() {
        #expect(LoopInstant(nanoseconds: .max - 1).advanced(by: 10) == LoopInstant(nanoseconds: .max))
        #expect(LoopInstant(nanoseconds: .min + 1).advanced(by: -10) == LoopInstant(nanoseconds: .min))
        #expect(LoopInstant(nanoseconds: 30).nanoseconds(since: LoopInstant(nanoseconds: 10)) == 20)
        #expect(LoopInstant(nanoseconds: .max).nanoseconds(since: LoopInstant(nanoseconds: -10)) == .max)
        #expect(LoopInstant(nanoseconds: .min).nanoseconds(since: LoopInstant(nanoseconds: 10)) == .min)
    }
}
