#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Closes a file descriptor, ignoring EINTR (Linux closes the descriptor anyway).
package func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
}
