#if canImport(Glibc)
import Glibc
internal import CPlatform
#elseif canImport(Darwin)
import Darwin
#endif

/// Wakes the I/O thread out of poll(2) when another thread hands it a command: an eventfd on
/// Linux, a pipe elsewhere.
///
/// The descriptor is closed only in `deinit`, when no thread can still signal it, so a late
/// signal can never hit a reused descriptor number.
package final class Wakeup: Sendable {
    /// The descriptor poll(2) watches for readability.
    package let readFD: Int32
    private let writeFD: Int32

    /// - Throws: ``SystemCallError`` when the descriptors cannot be made (the process is out of them).
    package init() throws(SystemCallError) {
        #if canImport(Glibc)
        let fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard fd >= 0 else { throw SystemCallError("eventfd", errno: errno) }
        readFD = fd
        writeFD = fd
        #else
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw SystemCallError("pipe", errno: errno) }
        for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        readFD = fds[0]
        writeFD = fds[1]
        #endif
    }

    deinit {
        closeDescriptor(readFD)
        if writeFD != readFD { closeDescriptor(writeFD) }
    }

    /// Makes `readFD` readable.
    package func signal() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(writeFD, $0.baseAddress, writeFD == readFD ? 8 : 1) }
    }

    /// Clears the readable state.
    package func drain() {
        var sink = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &sink, { read(readFD, $0.baseAddress, $0.count) }) > 0 {
            if writeFD == readFD { break }
        }
    }
}
