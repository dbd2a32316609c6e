import Testing

@testable import AuthRPCTransport

/// The loop's integer clock: conversions from the standard library's, saturation, poll timeouts.
@Suite("Loop clock")
struct LoopClockTests {
    private static let millisecond: Int128 = 1_000_000_000_000_000

    @Test("instants are counted from the clock's origin, either side of it, as requests carry them")
    func instants() {
        let origin = LoopClock.origin
        #expect(LoopClock.instant(origin) == LoopInstant(attoseconds: 0))
        #expect(LoopClock.instant(origin + .milliseconds(5)) == LoopInstant(attoseconds: 5 * Self.millisecond))
        #expect(LoopClock.instant(origin - .seconds(1)) == LoopInstant(attoseconds: -1_000 * Self.millisecond))
        #expect(LoopClock.now >= LoopInstant(attoseconds: 0))

        let deadline = origin + .milliseconds(250)
        var request = HTTP2Request(headerBlock: HTTP2HeaderBlock(), body: [], deadline: deadline)
        #expect(request.deadline == deadline)
        #expect(
            request.deadlineSinceOrigin.map(LoopInstant.init(sinceOrigin:))
                == LoopInstant(attoseconds: 250 * Self.millisecond)
        )
        request.deadline = nil
        #expect(request.deadline == nil && request.deadlineSinceOrigin == nil)
    }

    @Test("poll never wakes early: 0 once due, whole milliseconds rounded up, Int32.max when too far")
    func pollMilliseconds() {
        let now = LoopInstant(attoseconds: 1_000)
        func wait(_ attoseconds: Int128) -> Int32 {
            LoopClock.pollMilliseconds(from: now, until: now.advanced(by: attoseconds))
        }
        #expect(wait(-5) == 0)
        #expect(wait(0) == 0)
        #expect(wait(1) == 1)
        #expect(wait(Self.millisecond - 1) == 1)
        #expect(wait(Self.millisecond) == 2)
        #expect(wait(Self.millisecond * 5 / 2) == 3)
        #expect(wait(Int128(Int32.max) * Self.millisecond) == .max)
        #expect(
            LoopClock.pollMilliseconds(from: LoopInstant(attoseconds: .min), until: LoopInstant(attoseconds: .max))
                == .max
        )
        #expect(
            LoopClock.pollMilliseconds(from: LoopInstant(attoseconds: .max), until: LoopInstant(attoseconds: .min)) == 0
        )
    }

    @Test("arithmetic on instants saturates instead of trapping")
    func saturation() {
        #expect(LoopInstant(attoseconds: .max - 1).advanced(by: 10) == LoopInstant(attoseconds: .max))
        #expect(LoopInstant(attoseconds: .min + 1).advanced(by: -10) == LoopInstant(attoseconds: .min))
        #expect(LoopInstant(attoseconds: 30).attoseconds(since: LoopInstant(attoseconds: 10)) == 20)
        #expect(LoopInstant(attoseconds: .max).attoseconds(since: LoopInstant(attoseconds: -10)) == .max)
        #expect(LoopInstant(attoseconds: .min).attoseconds(since: LoopInstant(attoseconds: 10)) == .min)
    }

    @Test("a keepalive interval of years is a wait poll can say, not an overflow")
    func farTimers() {
        let now = LoopClock.now
        let interval = Duration.seconds(Int64.max).attoseconds
        #expect(LoopClock.pollMilliseconds(from: now, until: now.advanced(by: interval)) == .max)
    }
}
