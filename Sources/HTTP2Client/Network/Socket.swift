import AuthRPCSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The outcome of one non-blocking read or write.
enum IOResult {
    /// This many bytes moved.
    case bytes(Int)
    /// The socket would block; wait for readiness and try again.
    case wouldBlock
    /// The peer closed the connection (reads only).
    case closed
    /// The call failed; the text names the cause.
    case failed(String)
}

/// A non-blocking stream socket, owned by one connection's I/O thread: TCP (with TCP_NODELAY)
/// or a unix-domain socket.
struct TCPSocket {
    let fd: Int32

    /// Connects to the first of `addresses` that answers, each attempt getting a fair share of
    /// the time left before `deadline`. `abortFD` (the loop's wake-up) readable aborts the attempt.
    static func connect(
        to addresses: [SocketAddress],
        target: HTTP2Target,
        deadline: ContinuousClock.Instant,
        abortFD: Int32
    ) throws(HTTP2Error) -> TCPSocket {
        var reasons: [String] = []
        var kinds: [ConnectFailureKind] = []
        for (index, address) in addresses.enumerated() {
            let remaining = deadline - .now
            if remaining <= .zero {
                reasons.append("\(address): timed out")
                kinds.append(.timedOut)
                break
            }
            let share = remaining / (addresses.count - index)
            let attemptDeadline = ContinuousClock.now + max(share, min(remaining, .seconds(1)))
            switch attempt(address, deadline: attemptDeadline, abortFD: abortFD) {
            case .success(let socket):
                return socket
            case .failure(.aborted):
                throw .connectFailed(
                    target: target.description,
                    reason: "connection attempt abandoned",
                    kind: .abandoned
                )
            case .failure(.failed(let code)):
                reasons.append("\(address): \(code.map(Errno.describe) ?? "timed out")")
                kinds.append(Self.kind(of: code))
            }
        }
        // One kind for the whole attempt: refused only when every address refused.
        let kind: ConnectFailureKind =
            kinds.allSatisfy { $0 == .refused }
            ? .refused
            : kinds.contains(.timedOut)
                ? .timedOut
                : kinds.contains(.unreachable) ? .unreachable : .other
        throw .connectFailed(target: target.description, reason: reasons.joined(separator: "; "), kind: kind)
    }

    /// The kind of one attempt's failure; `nil` is a timeout.
    private static func kind(of code: Int32?) -> ConnectFailureKind {
        switch code {
        case nil, ETIMEDOUT: return .timedOut
        // A unix socket's file that is missing is nothing listening, as a refused TCP port is.
        case ECONNREFUSED, ENOENT: return .refused
        case ENETUNREACH, EHOSTUNREACH: return .unreachable
        default: return .other
        }
    }

    private static func attempt(
        _ address: SocketAddress,
        deadline: ContinuousClock.Instant,
        abortFD: Int32
    ) -> Result<TCPSocket, ConnectFailure> {
        #if canImport(Glibc)
        let fd = socket(
            address.family,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
            0
        )
        #else
        let fd = socket(address.family, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return .failure(.failed(errno)) }
        #if canImport(Darwin)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var noSigPipe: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &noSigPipe, socklen_t(MemoryLayout<Int32>.size))
        #endif
        if address.family != AF_UNIX {
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        }

        let started = address.withSockAddr { connectDescriptor(fd, $0, $1) }
        if started != 0 && errno != EINPROGRESS {
            let code = errno
            closeDescriptor(fd)
            return .failure(.failed(code))
        }
        if started != 0 {
            // Wait for writability (connected or failed), the deadline, or an abort.
            while true {
                let millis = PollTimeout.milliseconds(until: deadline)
                if millis == 0 {
                    closeDescriptor(fd)
                    return .failure(.failed(nil))
                }
                var fds = [
                    pollfd(fd: fd, events: Int16(POLLOUT), revents: 0),
                    pollfd(fd: abortFD, events: Int16(POLLIN), revents: 0),
                ]
                let ready = poll(&fds, 2, millis)
                if ready < 0 && errno == EINTR { continue }
                if fds[1].revents != 0 {
                    closeDescriptor(fd)
                    return .failure(.aborted)
                }
                if ready > 0 { break }
            }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
            if error != 0 {
                closeDescriptor(fd)
                return .failure(.failed(error))
            }
        }
        return .success(TCPSocket(fd: fd))
    }

    /// Reads what is available into `buffer`.
    func receive(into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        while true {
            let count = recv(fd, buffer.baseAddress, buffer.count, 0)
            if count > 0 { return .bytes(count) }
            if count == 0 { return .closed }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: return .failed(Errno.describe(errno))
            }
        }
    }

    /// Writes as much of `bytes` as the socket takes now, never raising SIGPIPE.
    func send(_ bytes: UnsafeRawBufferPointer) -> IOResult {
        #if canImport(Glibc)
        let flags = Int32(MSG_NOSIGNAL)
        #else
        let flags: Int32 = 0
        #endif
        while true {
            let count = sendDescriptor(fd, bytes.baseAddress, bytes.count, flags)
            if count >= 0 { return .bytes(count) }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: return .failed(Errno.describe(errno))
            }
        }
    }

    /// Closes the descriptor.
    func closeSocket() {
        closeDescriptor(fd)
    }
}

private enum ConnectFailure: Error {
    /// The errno of the failure, or `nil` when the attempt timed out.
    case failed(Int32?)
    case aborted
}

// Inside TCPSocket its own `connect` and `send` would shadow the C functions of the same names.
private func connectDescriptor(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    connect(fd, address, length)
}
private func sendDescriptor(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int, _ flags: Int32) -> Int {
    send(fd, bytes, count, flags)
}
