import AuthRPCSystem
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("WakeTimer")
struct WakeTimerTests {
    /// Whether `fd` becomes readable within `milliseconds` (0: now, without waiting).
    private func readable(_ fd: Int32, within milliseconds: Int32 = 0) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, milliseconds) == 1 && entry.revents & Int16(POLLIN) != 0
    }

    #if os(Linux)
    @Test("armed for a time, the descriptor turns readable then and not before; drain clears it")
    func firesAtItsTime() throws {
        let timer = try #require(WakeTimer())
        #expect(!readable(timer.fd))
        let armedAt = ContinuousTime.now
        let at = armedAt.advanced(by: 50_000_000)
        #expect(timer.arm(at: at))
        // Not before its time (a thread descheduled past it may find it readable already).
        #expect(!readable(timer.fd) || ContinuousTime.now >= at)
        #expect(readable(timer.fd, within: 10_000))
        #expect(ContinuousTime.now >= at)
        timer.drain()
        #expect(!readable(timer.fd))
    }

    @Test("a time already past fires at once; arming again replaces the earlier time")
    func pastAndRearmed() throws {
        let timer = try #require(WakeTimer())
        #expect(timer.arm(at: ContinuousTime.now.advanced(by: -1_000_000)))
        #expect(readable(timer.fd, within: 10_000))
        timer.drain()
        // Armed an hour away, then moved to now: it fires now.
        #expect(timer.arm(at: ContinuousTime.now.advanced(by: 3_600_000_000_000)))
        #expect(timer.arm(at: ContinuousTime.now))
        #expect(readable(timer.fd, within: 10_000))
        timer.drain()
        // Moved an hour away after all: nothing fires now.
        #expect(timer.arm(at: ContinuousTime.now.advanced(by: 3_600_000_000_000)))
        #expect(!readable(timer.fd, within: 20))
    }
    #else
    @Test("there is no wake timer off Linux: the borrower wakes the thread instead")
    func noneElsewhere() {
        #expect(WakeTimer() == nil)
    }
    #endif
}
