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

/// A connected non-blocking stream socket (TCP with TCP_NODELAY, or unix-domain), owned by one
/// thread at a time.
struct StreamSocket {
    let fd: Int32

    /// Connects to one of `addresses` as Happy Eyeballs v2 does (``HappyEyeballs``): attempts
    /// start 250 ms apart, or at once when the previous one fails, and the first to connect wins;
    /// the others are closed. Everything ends at `deadline`; `abortFD` (the loop's wake-up)
    /// becoming readable abandons the attempt. `description` names the destination in errors.
    static func connect(
        to addresses: [SocketAddress],
        description: String,
        deadline: ContinuousClock.Instant,
        abortFD: Int32
    ) throws(TransportFailure) -> StreamSocket {
        var plan = HappyEyeballs(addresses)
        var pending: [(fd: Int32, address: SocketAddress)] = []
        var failures: [(address: SocketAddress, code: Int32?)] = []
        defer { for attempt in pending { closeDescriptor(attempt.fd) } }
        while true {
            let now = ContinuousClock.now
            var waitUntil = deadline
            switch plan.step(now: now) {
            case .start(let address):
                switch start(address) {
                case .connected(let fd):
                    return StreamSocket(fd: fd)
                case .inProgress(let fd):
                    pending.append((fd, address))
                case .failed(let code):
                    failures.append((address, code))
                    plan.attemptFailed(now: now)
                }
                continue
            case .wait(let until):
                if let until { waitUntil = min(until, deadline) }
            case .exhausted:
                throw failure(failures, description: description)
            }
            let millis = PollTimeout.milliseconds(until: waitUntil)
            if millis == 0 && waitUntil == deadline {
                failures += pending.map { ($0.address, nil) }
                throw failure(failures, description: description)
            }
            var fds = pending.map { pollfd(fd: $0.fd, events: Int16(POLLOUT), revents: 0) }
            fds.append(pollfd(fd: abortFD, events: Int16(POLLIN), revents: 0))
            let ready = poll(&fds, nfds_t(fds.count), millis)
            if ready < 0 && errno == EINTR { continue }
            if fds[fds.count - 1].revents != 0 {
                throw .connectFailed(target: description, reason: "connection attempt abandoned", kind: .abandoned)
            }
            guard ready > 0 else { continue }
            // Ready attempts, last first so the indexes of the others stay valid.
            for index in pending.indices.reversed() where fds[index].revents != 0 {
                let attempt = pending.remove(at: index)
                var error: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(attempt.fd, SOL_SOCKET, SO_ERROR, &error, &length)
                if error == 0 {
                    return StreamSocket(fd: attempt.fd)
                }
                closeDescriptor(attempt.fd)
                failures.append((attempt.address, error))
                plan.attemptFailed(now: .now)
            }
        }
    }

    /// Every attempt failed: one error naming each address and why, with one kind for the whole
    /// attempt (refused only when every address refused).
    private static func failure(
        _ failures: [(address: SocketAddress, code: Int32?)],
        description: String
    ) -> TransportFailure {
        let kinds = failures.map { kind(of: $0.code) }
        let overall: ConnectFailureKind =
            kinds.isEmpty
            ? .timedOut
            : kinds.allSatisfy { $0 == .refused }
                ? .refused
                : kinds.contains(.timedOut)
                    ? .timedOut
                    : kinds.contains(.unreachable) ? .unreachable : .other
        let reasons = failures.map { "\($0.address): \($0.code.map(Errno.describe) ?? "timed out")" }
        return .connectFailed(
            target: description,
            reason: reasons.isEmpty ? "timed out" : reasons.joined(separator: "; "),
            kind: overall
        )
    }

    /// The kind of one attempt's failure; `nil` is a timeout.
    private static func kind(of code: Int32?) -> ConnectFailureKind {
        switch code {
        case nil, ETIMEDOUT: return .timedOut
        case ECONNREFUSED, ENOENT: return .refused
        case ENETUNREACH, EHOSTUNREACH: return .unreachable
        default: return .other
        }
    }

    private enum Start {
        case connected(Int32)
        case inProgress(Int32)
        case failed(Int32)
    }

    /// Opens a non-blocking socket and starts connecting it to `address`.
    private static func start(_ address: SocketAddress) -> Start {
        #if canImport(Glibc)
        let fd = socket(
            address.family,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
            0
        )
        #else
        let fd = socket(address.family, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return .failed(errno) }
        #if canImport(Darwin)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        var noSigPipe: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &noSigPipe, socklen_t(MemoryLayout<Int32>.size))
        #endif
        if address.isInternet {
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        let started = address.withSockAddr { connectDescriptor(fd, $0, $1) }
        if started == 0 { return .connected(fd) }
        let code = errno
        if code == EINPROGRESS || code == EINTR { return .inProgress(fd) }
        closeDescriptor(fd)
        return .failed(code)
    }

    /// What waiting for a socket ended with.
    enum Readiness {
        case ready
        case timedOut
        case aborted
    }

    /// Waits until the socket is ready for `events` (POLLIN, POLLOUT), `deadline` passes, or
    /// `abortFD` becomes readable.
    func wait(for events: Int16, deadline: ContinuousClock.Instant, abortFD: Int32) -> Readiness {
        while true {
            let millis = PollTimeout.milliseconds(until: deadline)
            guard millis > 0 else { return .timedOut }
            var fds = [
                pollfd(fd: fd, events: events, revents: 0),
                pollfd(fd: abortFD, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, millis)
            if ready < 0 && errno == EINTR { continue }
            if fds[1].revents != 0 { return .aborted }
            if ready > 0 { return .ready }
        }
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

// Inside StreamSocket its own `connect` and `send` would shadow the C functions of the same names.
private func connectDescriptor(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    connect(fd, address, length)
}
private func sendDescriptor(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int, _ flags: Int32) -> Int {
    send(fd, bytes, count, flags)
}
