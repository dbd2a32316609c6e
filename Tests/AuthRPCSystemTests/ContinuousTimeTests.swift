import Testing

@testable import AuthRPCSystem

/// The integer clock: the same timeline as `ContinuousClock`, conversions, saturation.
@Suite("Continuous time")
struct ContinuousTimeTests {
    @Test("a reading lies between two readings of ContinuousClock taken around it: the same clock")
    func sameClockAsContinuousClock() {
        for _ in 0..<1_000 {
            let before = ContinuousClock.now
            let reading = ContinuousTime.now
            let after = ContinuousClock.now
            // Rounded up to whole nanoseconds, `before` may pass the reading by less than one.
            #expect(ContinuousTime(before).nanoseconds - 1 <= reading.nanoseconds)
            #expect(reading <= ContinuousTime(after))
        }
    }

    @Test("instants convert to the nanosecond, rounded up, and back")
    func conversions() {
        let epoch = ContinuousClock().systemEpoch
        #expect(ContinuousTime(epoch) == ContinuousTime(nanoseconds: 0))
        #expect(ContinuousTime(epoch + .milliseconds(5)) == ContinuousTime(nanoseconds: 5_000_000))
        #expect(ContinuousTime(epoch + .nanoseconds(7)).instant == epoch + .nanoseconds(7))
        // A fraction of a nanosecond counts as a whole one, so a deadline never comes early.
        #expect(ContinuousTime(epoch + .nanoseconds(7) + Duration(attoseconds: 1)) == ContinuousTime(nanoseconds: 8))
        #expect(ContinuousTime(epoch - .nanoseconds(3)) == ContinuousTime(nanoseconds: -3))
        #expect(ContinuousTime.nanoseconds(roundingUp: .seconds(Int64.max)) == .max)
        #expect(ContinuousTime.nanoseconds(roundingUp: .seconds(-2)) == -2_000_000_000)
        #expect(ContinuousTime.nanoseconds(roundingUp: Duration(attoseconds: -1)) == 0)
    }

    @Test("arithmetic saturates instead of trapping")
    func saturation() {
        #expect(ContinuousTime(nanoseconds: .max - 1).advanced(by: 10) == .distantFuture)
        #expect(ContinuousTime(nanoseconds: .min + 1).advanced(by: -10) == ContinuousTime(nanoseconds: .min))
        #expect(ContinuousTime(nanoseconds: 30).nanoseconds(since: ContinuousTime(nanoseconds: 10)) == 20)
        #expect(ContinuousTime.distantFuture.nanoseconds(since: ContinuousTime(nanoseconds: -10)) == .max)
        #expect(ContinuousTime(nanoseconds: .min).nanoseconds(since: ContinuousTime(nanoseconds: 10)) == .min)
    }
}
