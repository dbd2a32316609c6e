import AuthRPCSystem
import Testing

@testable import AuthRPCTransport

/// The loop's timers on the integer clock: poll timeouts, long timers, requests' deadlines.
@Suite("Loop clock")
struct LoopClockTests {
    private static let millisecond: Int64 = 1_000_000

    @Test("a request carries its deadline as the loop compares it")
    func requestDeadline() {
        let deadline = ContinuousTime.now.advanced(by: 250 * Self.millisecond)
        var request = HTTP2Request(headerBlock: HTTP2HeaderBlock(), body: [], deadline: deadline)
        #expect(request.deadline == deadline)
        request.deadline = nil
        #expect(request.deadline == nil)
    }

    @Test("poll never wakes early: 0 once due, whole milliseconds rounded up, Int32.max when too far")
    func pollMilliseconds() {
        let now = ContinuousTime(nanoseconds: 1_000)
        func wait(_ nanoseconds: Int64) -> Int32 {
            LoopClock.pollMilliseconds(from: now, until: now.advanced(by: nanoseconds))
        }
        #expect(wait(-5) == 0)
        #expect(wait(0) == 0)
        #expect(wait(1) == 1)
        #expect(wait(Self.millisecond - 1) == 1)
        #expect(wait(Self.millisecond) == 2)
        #expect(wait(Self.millisecond * 5 / 2) == 3)
        #expect(wait(Int64(Int32.max) * Self.millisecond) == .max)
        #expect(LoopClock.pollMilliseconds(from: ContinuousTime(nanoseconds: .min), until: .distantFuture) == .max)
        #expect(LoopClock.pollMilliseconds(from: .distantFuture, until: ContinuousTime(nanoseconds: .min)) == 0)
    }

    @Test("a keepalive interval of years is a wait poll can say, not an overflow")
    func farTimers() {
        let now = ContinuousTime.now
        let interval = ContinuousTime.nanoseconds(roundingUp: .seconds(Int64.max))
        #expect(interval == .max)
        #expect(now.advanced(by: interval) == .distantFuture)
        #expect(LoopClock.pollMilliseconds(from: now, until: now.advanced(by: interval)) == .max)
        #expect(ContinuousTime.nanoseconds(roundingUp: .milliseconds(20)) == 20 * Self.millisecond)
    }
}
