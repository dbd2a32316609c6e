#if canImport(Glibc)
import Glibc
internal import CPlatform
#elseif canImport(Darwin)
import Darwin
#endif

/// A one-shot alarm that poll(2) watches beside a ``Wakeup``: it makes its descriptor readable
/// at a given ``ContinuousTime``, with no thread woken before then.
///
/// A connection's I/O thread computes its sleep from its own timers. A caller that submits a
/// stream on the session while that thread sleeps (`ConnectionLoop`'s session loan) arms this
/// for its deadline when the deadline comes first, instead of waking the thread to recompute.
/// One `timerfd` on Linux, on `CLOCK_BOOTTIME` (the clock ``ContinuousTime`` reads, so an
/// instant is armed as is). Elsewhere there is none (``init()`` returns nil), and the caller
/// wakes the thread instead.
package final class WakeTimer: Sendable {
    /// The descriptor poll(2) watches for readability.
    package let fd: Int32

    /// A disarmed timer; nil where the platform has none or no descriptor is left.
    package init?() {
        #if os(Linux)
        let fd = timerfd_create(CLOCK_BOOTTIME, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
        guard fd >= 0 else { return nil }
        self.fd = fd
        #else
        return nil
        #endif
    }

    deinit {
        closeDescriptor(fd)
    }

    /// Makes ``fd`` readable at `time`, replacing any earlier arming. Returns false when the
    /// kernel refused (the caller must then wake the thread itself).
    package func arm(at time: ContinuousTime) -> Bool {
        #if os(Linux)
        // Zero disarms a timerfd, so the earliest instant armed is one nanosecond.
        let nanoseconds = max(time.nanoseconds, 1)
        var setting = itimerspec()
        setting.it_value.tv_sec = Int(nanoseconds / 1_000_000_000)
        setting.it_value.tv_nsec = Int(nanoseconds % 1_000_000_000)
        return timerfd_settime(fd, Int32(TFD_TIMER_ABSTIME), &setting, nil) == 0
        #else
        return false
        #endif
    }

    /// Clears the readable state after the alarm went off.
    package func drain() {
        var expirations: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &expirations) { read(fd, $0.baseAddress, $0.count) }
    }
}
