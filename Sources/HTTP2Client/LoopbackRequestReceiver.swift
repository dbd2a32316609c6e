#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization

/// Receives the one HTTP/1.1 request a browser makes to a loopback redirect URI (RFC 8252
/// section 7.3): the end of an OAuth sign-in in the user's browser.
///
/// It lives in this target because every socket and C call of the package stays here. It is not
/// a web server: it listens on `127.0.0.1` (or `::1`) only, reads request heads of at most 16 KiB,
/// answers each connection once and closes it, and stops after the first `GET` of the expected
/// path. Other requests (a favicon, a probe) get a 404 and do not end the wait.
package final class LoopbackRequestReceiver: Sendable {
    /// The port it listens on (chosen by the system).
    package let port: Int
    /// The address it listens on: `127.0.0.1` or `::1`.
    package let host: String

    private let listenFD: Int32
    private let wakeup: Wakeup
    private let closed = Atomic<Bool>(false)

    /// What the receiver answers to the request it was waiting for.
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
        default: throw Failure(description: "the redirect receiver listens on 127.0.0.1 or ::1 only, not \(host)", isTimeout: false)
        }
        #if canImport(Glibc)
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
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
        do throws(HTTP2Error) {
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

    /// Waits for a `GET` of `path` and answers it with `respond(requestTarget)`.
    ///
    /// - Returns: The request target (path and query) of that request.
    /// - Throws: ``Failure`` on timeout, cancellation, or ``close()``.
    package func receive(path: String, timeout: Duration, respond: @escaping @Sendable (String) -> Response) async throws(Failure) -> String {
        let deadline = ContinuousClock.now + timeout
        let result: Result<String, Failure> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let thread = Thread { [self] in
                    continuation.resume(returning: serve(path: path, deadline: deadline, respond: respond))
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

    /// The blocking loop, run on its own thread: accepts connections, reads request heads,
    /// answers them.
    private func serve(path: String, deadline: ContinuousClock.Instant, respond: (String) -> Response) -> Result<String, Failure> {
        var clients: [Int32: [UInt8]] = [:]
        defer { clients.keys.forEach(closeDescriptor) }
        while true {
            if closed.load(ordering: .acquiring) {
                return .failure(Failure(description: "stopped waiting for the browser's redirect", isTimeout: false))
            }
            let millis = TCPSocket.millisecondsUntil(deadline)
            if millis == 0 {
                return .failure(Failure(description: "no redirect arrived on http://\(hostForURL):\(port) in time", isTimeout: true))
            }
            var fds = [pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeup.readFD, events: Int16(POLLIN), revents: 0)]
            fds += clients.keys.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), millis)
            if ready < 0 && errno != EINTR {
                return .failure(Failure(description: "poll failed: \(Errno.describe(errno))", isTimeout: false))
            }
            if fds[0].revents != 0 {
                let client = accept(listenFD, nil, nil)
                if client >= 0 {
                    _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
                    clients[client] = []
                }
            }
            for entry in fds.dropFirst(2) where entry.revents != 0 {
                guard let request = readHead(entry.fd, into: &clients) else { continue }
                clients.removeValue(forKey: entry.fd)
                defer { closeDescriptor(entry.fd) }
                if let target = Self.target(ofGET: request, path: path) {
                    write(respond(target), to: entry.fd)
                    return .success(target)
                }
                write(Response(status: 404, html: "<!doctype html><title>Not found</title><p>Not found.</p>"), to: entry.fd)
            }
        }
    }

    private var hostForURL: String { host == "::1" ? "[::1]" : host }

    /// Reads what `fd` has; returns the head once complete (or the connection ends).
    private func readHead(_ fd: Int32, into clients: inout [Int32: [UInt8]]) -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return nil }
        var buffer = clients[fd] ?? []
        if count > 0 { buffer += chunk[0..<count] }
        clients[fd] = buffer
        let complete = buffer.count >= 4 && buffer.indices.dropLast(3).contains { buffer[$0...$0 + 3].elementsEqual([13, 10, 13, 10]) }
        if complete || count <= 0 || buffer.count > 16 * 1024 { return buffer }
        return nil
    }

    /// The request target of `GET <path>[?query] HTTP/1.x`, or `nil` for anything else.
    private static func target(ofGET head: [UInt8], path: String) -> String? {
        guard let lineEnd = head.firstIndex(of: 13) ?? head.firstIndex(of: 10) else { return nil }
        let parts = String(decoding: head[..<lineEnd], as: UTF8.self).split(separator: " ")
        guard parts.count == 3, parts[0] == "GET", parts[2].hasPrefix("HTTP/1.") else { return nil }
        let target = String(parts[1])
        let targetPath = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        return targetPath == path ? target : nil
    }

    private func write(_ response: Response, to fd: Int32) {
        let body = Array(response.html.utf8)
        let reason = response.status == 200 ? "OK" : response.status == 404 ? "Not Found" : "Bad Request"
        let head = "HTTP/1.1 \(response.status) \(reason)\r\nContent-Type: text/html; charset=utf-8\r\n"
            + "Content-Length: \(body.count)\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n"
        var bytes = Array(head.utf8) + body
        // The socket is non-blocking; a page this small fits the send buffer, but wait if not.
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeMutableBytes { sendBytes(fd, $0.baseAddress! + sent, $0.count - sent) }
            if count > 0 { sent += count; continue }
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
