import AuthRPCSystem
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("Wakeup")
struct WakeupTests {
    /// Whether `fd` is readable now, without waiting.
    private func isReadable(_ fd: Int32) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) == 1 && entry.revents & Int16(POLLIN) != 0
    }

    @Test("a signal makes the descriptor readable and drain clears it, however many signals came")
    func signalAndDrain() throws {
        let wakeup = try Wakeup()
        #expect(!isReadable(wakeup.readFD))
        wakeup.signal()
        #expect(isReadable(wakeup.readFD))
        wakeup.drain()
        #expect(!isReadable(wakeup.readFD))
        for _ in 0..<100 { wakeup.signal() }
        wakeup.drain()
        #expect(!isReadable(wakeup.readFD))
    }
}
