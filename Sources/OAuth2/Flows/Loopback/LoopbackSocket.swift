import AuthRPCSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The system calls of the loopback redirect receiver: a listener on a loopback address, and
/// connections that are non-blocking, closed on exec (a browser started meanwhile inherits none)
/// and never raise SIGPIPE (writes go through AuthRPCSystem's `sendWithoutSignal`).
///
/// SIGPIPE's default action ends the process, and any local process can connect, send a request
/// and reset the connection before the answer: on Linux every send carries `MSG_NOSIGNAL`; on
/// Darwin, which has no such flag, each accepted socket gets `SO_NOSIGPIPE` (a connection that
/// cannot have it is closed unanswered).
enum LoopbackSocket {
    /// What a read brought.
    enum ReadResult: Equatable {
        /// This many bytes arrived.
        case bytes(Int)
        /// Nothing yet.
        case wouldBlock
        /// The peer closed or reset the connection.
        case closed
    }

    /// Listens on `127.0.0.1` or `::1`, on a port the system picks.
    ///
    /// - Returns: The listening descriptor (non-blocking, closed on exec) and its port.
    static func listen(host: String) throws(LoopbackRequestReceiver.Failure) -> (fd: Int32, port: Int) {
        let family: Int32
        switch host {
        case "127.0.0.1": family = AF_INET
        case "::1": family = AF_INET6
        default:
            throw .init(description: "the redirect receiver listens on 127.0.0.1 or ::1 only, not \(host)")
        }
        #if canImport(Glibc)
        let fd = socket(
            family,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
            0
        )
        #else
        let fd = socket(family, SOCK_STREAM, 0)
        if fd >= 0 {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        #endif
        guard fd >= 0 else { throw .init(description: "socket failed: \(Errno.describe(errno))") }
        var port: UInt16 = 0
        let status: Int32
        if family == AF_INET {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            status = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                    bind(fd, raw, length) == 0 && listenDescriptor(fd) && getsockname(fd, raw, &length) == 0 ? 0 : -1
                }
            }
            port = UInt16(bigEndian: address.sin_port)
        } else {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_addr = in6addr_loopback
            var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            status = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                    bind(fd, raw, length) == 0 && listenDescriptor(fd) && getsockname(fd, raw, &length) == 0 ? 0 : -1
                }
            }
            port = UInt16(bigEndian: address.sin6_port)
        }
        guard status == 0 else {
            let reason = Errno.describe(errno)
            closeDescriptor(fd)
            throw .init(description: "cannot listen on \(host): \(reason)")
        }
        return (fd, Int(port))
    }

    /// Accepts a waiting connection: non-blocking, closed on exec, SIGPIPE-safe.
    ///
    /// - Returns: Its descriptor; `nil` when none was waiting, or it failed (reset before it
    ///   was accepted, out of descriptors, or, on Darwin, `SO_NOSIGPIPE` refused).
    static func accept(_ listener: Int32) -> Int32? {
        let fd = acceptNonBlocking(listener)
        guard fd >= 0 else { return nil }
        #if canImport(Darwin)
        var noSigPipe: Int32 = 1
        guard setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &noSigPipe, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            closeDescriptor(fd)
            return nil
        }
        #endif
        return fd
    }

    /// Reads at most `limit` bytes from `fd`, appending them to `buffer`.
    static func receive(_ fd: Int32, appendingTo buffer: inout [UInt8], limit: Int) -> ReadResult {
        guard limit > 0 else { return .bytes(0) }
        var chunk = [UInt8](repeating: 0, count: min(limit, 4096))
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer += chunk[..<count]
                return .bytes(count)
            }
            if count < 0 && errno == EINTR { continue }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return .wouldBlock }
            return .closed
        }
    }
}

// Inside LoopbackSocket its own `listen` would shadow the C function of the same name. The
// backlog is room for a burst of local connections between two turns of the receiver's loop (a
// SYN that finds the queue full is dropped, and the browser tries again only a second later).
private func listenDescriptor(_ fd: Int32) -> Bool {
    listen(fd, 128) == 0
}
