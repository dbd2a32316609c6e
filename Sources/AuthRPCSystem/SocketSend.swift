#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one non-blocking send did.
package enum SocketSendResult: Equatable, Sendable {
    /// This many bytes went out.
    case bytes(Int)
    /// The send buffer is full: wait for writability and try again.
    case wouldBlock
    /// The connection is gone (reset, closed) or the call failed; the errno.
    case failed(Int32)
}

/// Writes as much of `bytes` as the socket `fd` takes now, retrying on EINTR, never raising
/// SIGPIPE: on Linux the send carries `MSG_NOSIGNAL`; Darwin has no such flag, so its sockets
/// must have `SO_NOSIGPIPE` set (the transport's and the loopback receiver's do).
package func sendWithoutSignal(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> SocketSendResult {
    #if canImport(Glibc)
    let flags = Int32(MSG_NOSIGNAL)
    #else
    let flags: Int32 = 0
    #endif
    while true {
        let count = send(fd, bytes.baseAddress, bytes.count, flags)
        if count >= 0 { return .bytes(count) }
        switch errno {
        case EINTR: continue
        case EAGAIN, EWOULDBLOCK: return .wouldBlock
        default: return .failed(errno)
        }
    }
}
