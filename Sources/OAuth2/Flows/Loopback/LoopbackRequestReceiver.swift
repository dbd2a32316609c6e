import AuthRPCSystem
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Receives the one HTTP/1.1 request a browser makes to a loopback redirect URI (RFC 8252
/// section 7.3): the end of an OAuth sign-in in the user's browser.
///
/// It lives in this target because every socket and C call of the package stays here. It is not
/// a web server: it listens on `127.0.0.1` (or `::1`) only, answers each connection once and
/// closes it, and stops after a `GET` of the expected path that the caller accepts. Any local
/// process can connect, so nothing it sends can end or stall the wait:
/// - a request the caller rejects (a forged redirect with the wrong `state`) gets the caller's
///   answer (400) and the wait goes on; other paths (a favicon, a probe) get 404;
/// - a request head must be complete within ``Limits/maximumHeadBytes`` (else 431) and
///   ``Limits/requestHeadTimeout`` of the connection being accepted (else it is closed);
/// - at most ``Limits/maximumConnections`` connections are open at once; past that, the oldest
///   is closed to admit the newest, so idle connections cannot lock the browser out.
package final class LoopbackRequestReceiver: Sendable {
    /// The port it listens on (chosen by the system).
    package let port: Int
    /// The address it listens on: `127.0.0.1` or `::1`.
    package let host: String

    private let listenFD: Int32
    private let wakeup: Wakeup
    private let closed = Atomic<Bool>(false)

    /// What the receiver answers to a request of the path it waits on.
    package struct Response: Sendable {
        /// The HTTP status code.
        package var status: Int
        /// An HTML page for the browser.
        package var html: String

        /// Creates a response.
        package init(status: Int = 200, html: String) {
            self.status = status
            self.html = html
        }
    }

    /// What the caller makes of a request of the path it waits on.
    package enum Decision: Sendable {
        /// The request it waited for: answer it and stop waiting.
        case accept(Response)
        /// Not the one (a forged redirect): answer it and keep waiting.
        case reject(Response)
    }

    /// Bounds on what local clients can make the receiver hold.
    package struct Limits: Sendable {
        /// Connections open at once; past that, the oldest is closed.
        package var maximumConnections: Int
        /// How long a connection has, from being accepted, to send a complete request head.
        package var requestHeadTimeout: Duration
        /// The largest request head read (request line and header fields).
        package var maximumHeadBytes: Int

        /// Creates limits; 32 connections, 10 s and 16 KiB by default.
        package init(
            maximumConnections: Int = 32,
            requestHeadTimeout: Duration = .seconds(10),
            maximumHeadBytes: Int = 16 * 1024
        ) {
            self.maximumConnections = max(1, maximumConnections)
            self.requestHeadTimeout = requestHeadTimeout
            self.maximumHeadBytes = max(64, maximumHeadBytes)
        }
    }

    /// Why receiving failed.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        /// What happened.
        package var description: String
        /// `true` when the wait timed out.
        package var isTimeout: Bool
    }

    /// Starts listening on `host` (`127.0.0.1` or `::1`), on a port the system picks.
    package init(host: String = "127.0.0.1") throws(Failure) {
        let family: Int32
        switch host {
        case "127.0.0.1": family = AF_INET
        case "::1": family = AF_INET6
        default:
            throw Failure(
                description: "the redirect receiver listens on 127.0.0.1 or ::1 only, not \(host)",
                isTimeout: false
            )
        }
        #if canImport(Glibc)
        let fd = socket(
            family,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
            0
        )
        #else
        let fd = socket(family, SOCK_STREAM, 0)
        if fd >= 0 { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        #endif
        guard fd >= 0 else { throw Failure(description: "socket failed: \(Errno.describe(errno))", isTimeout: false) }
        var port: UInt16 = 0
        let status: Int32
        if family == AF_INET {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            status = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                    bind(fd, raw, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, raw, &length) == 0 ? 0 : -1
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
                    bind(fd, raw, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, raw, &length) == 0 ? 0 : -1
                }
            }
            port = UInt16(bigEndian: address.sin6_port)
        }
        guard status == 0 else {
            let reason = Errno.describe(errno)
            closeDescriptor(fd)
            throw Failure(description: "cannot listen on \(host): \(reason)", isTimeout: false)
        }
        do throws(SystemCallError) {
            wakeup = try Wakeup()
        } catch {
            closeDescriptor(fd)
            throw Failure(description: "\(error)", isTimeout: false)
        }
        self.listenFD = fd
        self.host = host
        self.port = Int(port)
    }

    deinit {
        closeDescriptor(listenFD)
    }

    /// Waits for a `GET` of `path` that `decide` accepts, answering every request on the way.
    ///
    /// - Parameter decide: Called with the request target (path and query) of each `GET` of
    ///   `path`, on the receiver's thread.
    /// - Returns: The request target of the accepted request.
    /// - Throws: ``Failure`` on timeout, cancellation, or ``close()``.
    package func receive(
        path: String,
        timeout: Duration,
        limits: Limits = Limits(),
        decide: @escaping @Sendable (String) -> Decision
    ) async throws(Failure) -> String {
        let deadline = ContinuousClock.now + timeout
        let result: Result<String, Failure> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let thread = Thread { [self] in
                    continuation.resume(
                        returning: serve(path: path, deadline: deadline, limits: limits, decide: decide)
                    )
                }
                thread.name = "oauth-loopback-redirect"
                thread.start()
            }
        } onCancel: {
            close()
        }
        return try result.get()
    }

    /// Ends a wait in progress and any later one.
    package func close() {
        closed.store(true, ordering: .releasing)
        wakeup.signal()
    }

    /// A request head, as far as the receiver needs it.
    package struct RequestHead: Sendable, Equatable {
        /// The method (`GET`).
        package var method: String
        /// The request target in origin form (`/path?query`).
        package var target: String

        /// Creates a head.
        package init(method: String, target: String) {
            self.method = method
            self.target = target
        }
        /// The target's path (before `?`).
        package var path: String {
            String(target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        }
    }

    /// What the bytes received so far on a connection amount to.
    package enum HeadParse: Sendable, Equatable {
        /// No blank line yet.
        case incomplete
        /// A complete head with a well-formed request line.
        case complete(RequestHead)
        /// A complete head whose request line is not `METHOD /target HTTP/1.x`.
        case invalid
    }

    /// Parses the start of an HTTP/1.1 request: complete once the head's blank line (CRLF CRLF)
    /// has arrived. The request line must be `token SP origin-form SP HTTP/1.0|1.1`, the target
    /// visible ASCII starting with `/`. Header fields are not needed and not read.
    package static func parseHead<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> HeadParse {
        let buffer = Array(bytes)
        guard let end = headEnd(buffer) else { return .incomplete }
        guard let lineEnd = buffer[..<end].firstIndex(of: 13), buffer.index(after: lineEnd) < buffer.count,
            buffer[lineEnd + 1] == 10
        else {
            return .invalid
        }
        let parts = buffer[..<lineEnd].split(separator: 32, omittingEmptySubsequences: false)
        guard parts.count == 3,
            !parts[0].isEmpty, parts[0].allSatisfy(isTokenCharacter),
            parts[1].first == UInt8(ascii: "/"), parts[1].allSatisfy({ (0x21...0x7E).contains($0) }),
            parts[2].elementsEqual("HTTP/1.1".utf8) || parts[2].elementsEqual("HTTP/1.0".utf8)
        else {
            return .invalid
        }
        return .complete(
            RequestHead(
                method: String(decoding: parts[0], as: UTF8.self),
                target: String(decoding: parts[1], as: UTF8.self)
            )
        )
    }

    /// The index of the blank line ending the head (the first CR of CRLF CRLF), if it arrived.
    private static func headEnd(_ buffer: [UInt8]) -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4)
        where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index
        }
        return nil
    }

    /// RFC 9110 `tchar`.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    /// A connection waiting for its request head.
    private struct Connection {
        var head: [UInt8] = []
        /// When it must have sent a complete head.
        let deadline: ContinuousClock.Instant
        /// Acceptance order, to find the oldest.
        let sequence: UInt64
    }

    /// The blocking loop, run on its own thread: accepts connections, reads request heads,
    /// answers them.
    private func serve(
        path: String,
        deadline: ContinuousClock.Instant,
        limits: Limits,
        decide: (String) -> Decision
    ) -> Result<String, Failure> {
        var connections: [Int32: Connection] = [:]
        var accepted: UInt64 = 0
        defer { connections.keys.forEach(closeDescriptor) }
        while true {
            if closed.load(ordering: .acquiring) {
                return .failure(Failure(description: "stopped waiting for the browser's redirect", isTimeout: false))
            }
            let now = ContinuousClock.now
            if now >= deadline {
                return .failure(
                    Failure(description: "no redirect arrived on http://\(hostForURL):\(port) in time", isTimeout: true)
                )
            }
            for (fd, connection) in connections where connection.deadline <= now {
                connections.removeValue(forKey: fd)
                closeDescriptor(fd)
            }
            let wakeAt = connections.values.map(\.deadline).reduce(deadline, min)
            var fds = [
                pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeup.readFD, events: Int16(POLLIN), revents: 0),
            ]
            fds += connections.keys.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), PollTimeout.milliseconds(until: wakeAt))
            if ready < 0 && errno != EINTR {
                return .failure(Failure(description: "poll failed: \(Errno.describe(errno))", isTimeout: false))
            }
            if fds[0].revents != 0 {
                let client = accept(listenFD, nil, nil)
                if client >= 0 {
                    _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
                    if connections.count >= limits.maximumConnections,
                        let oldest = connections.min(by: { $0.value.sequence < $1.value.sequence })?.key
                    {
                        connections.removeValue(forKey: oldest)
                        closeDescriptor(oldest)
                    }
                    accepted += 1
                    connections[client] = Connection(deadline: .now + limits.requestHeadTimeout, sequence: accepted)
                }
            }
            for entry in fds.dropFirst(2) where entry.revents != 0 {
                guard var connection = connections[entry.fd] else { continue }
                let (open, parse) = read(entry.fd, into: &connection.head, limit: limits.maximumHeadBytes)
                connections[entry.fd] = connection
                let answer: Response
                switch parse {
                case .incomplete where connection.head.count > limits.maximumHeadBytes:
                    answer = Response(
                        status: 431,
                        html: "<!doctype html><title>Request too large</title><p>Request header fields too large.</p>"
                    )
                case .incomplete:
                    if open { continue }
                    connections.removeValue(forKey: entry.fd)
                    closeDescriptor(entry.fd)
                    continue
                case .invalid:
                    answer = Response(status: 400, html: "<!doctype html><title>Bad request</title><p>Bad request.</p>")
                case .complete(let head) where head.method == "GET" && head.path == path:
                    switch decide(head.target) {
                    case .accept(let response):
                        connections.removeValue(forKey: entry.fd)
                        write(response, to: entry.fd)
                        closeDescriptor(entry.fd)
                        return .success(head.target)
                    case .reject(let response):
                        answer = response
                    }
                case .complete:
                    answer = Response(status: 404, html: "<!doctype html><title>Not found</title><p>Not found.</p>")
                }
                connections.removeValue(forKey: entry.fd)
                write(answer, to: entry.fd)
                closeDescriptor(entry.fd)
            }
        }
    }

    private var hostForURL: String { host == "::1" ? "[::1]" : host }

    /// Reads what `fd` has into `head` (at most one byte past `limit`, so an oversized head is
    /// seen); whether the connection is still open, and what the bytes amount to.
    private func read(_ fd: Int32, into head: inout [UInt8], limit: Int) -> (open: Bool, parse: HeadParse) {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let room = min(chunk.count, limit + 1 - head.count)
        let count = room > 0 ? chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, room, 0) } : 0
        if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
            return (true, Self.parseHead(head))
        }
        if count > 0 { head += chunk[0..<count] }
        return (count > 0 || room <= 0, Self.parseHead(head))
    }

    private func write(_ response: Response, to fd: Int32) {
        let body = Array(response.html.utf8)
        let reason: String
        switch response.status {
        case 200: reason = "OK"
        case 404: reason = "Not Found"
        case 431: reason = "Request Header Fields Too Large"
        default: reason = "Bad Request"
        }
        let head =
            "HTTP/1.1 \(response.status) \(reason)\r\nContent-Type: text/html; charset=utf-8\r\n"
            + "Content-Length: \(body.count)\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n"
        var bytes = Array(head.utf8) + body
        // The socket is non-blocking; a page this small fits the send buffer, but wait a little if not.
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeMutableBytes { sendBytes(fd, $0.baseAddress! + sent, $0.count - sent) }
            if count > 0 {
                sent += count
                continue
            }
            if count < 0 && (errno == EAGAIN || errno == EINTR) {
                var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                if poll(&entry, 1, 1000) <= 0 { return }
                continue
            }
            return
        }
    }
}

private func sendBytes(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    send(fd, bytes, count, Int32(MSG_NOSIGNAL))
    #else
    send(fd, bytes, count, 0)
    #endif
}
