#if canImport(Glibc)
internal import CPlatform
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Closes a file descriptor, ignoring EINTR (Linux closes the descriptor anyway).
package func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
}

/// Accepts a connection waiting on `listener` as a non-blocking descriptor that is closed on
/// exec (a child process started meanwhile, such as a browser, inherits none).
///
/// - Returns: The descriptor, or -1 with `errno` set.
package func acceptNonBlocking(_ listener: Int32) -> Int32 {
    #if canImport(Glibc)
    return cplatform_accept_nonblocking(listener)
    #else
    let fd = accept(listener, nil, nil)
    guard fd >= 0 else { return -1 }
    guard fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0, fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 else {
        let code = errno
        _ = close(fd)
        errno = code
        return -1
    }
    return fd
    #endif
}
