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
/// It is not a web server: it listens on `127.0.0.1` (or `::1`) only, answers each connection
/// once and closes it, and stops after a `GET` of the expected path that the caller accepts.
/// Any local process can connect, so nothing it sends can end or stall the wait:
/// - a request the caller rejects (a forged redirect with the wrong `state`) gets the caller's
///   answer (400) and the wait goes on; other paths (a favicon, a probe) get 404, other methods
///   405, and a `Host` other than the receiver's own address and port 421 (a web page that
///   rebound its name to 127.0.0.1 cannot reach the caller);
/// - a request head is read by ``LoopbackRequestHead``: malformed heads get 400 (or 431, 505)
///   as soon as the offending line arrives; a head must be complete within
///   ``Limits/requestHeadTimeout`` of the connection being accepted (else it is closed);
/// - at most ``Limits/maximumConnections`` connections are open at once; past that, the oldest
///   is closed to admit the newest, so idle connections cannot lock the browser out;
/// - a connection reset before its answer costs nothing but itself: no write can raise SIGPIPE
///   (``LoopbackSocket``).
final class LoopbackRequestReceiver: Sendable {
    /// The port it listens on (chosen by the system).
    let port: Int
    /// The address it listens on: `127.0.0.1` or `::1`.
    let host: String

    private let listenFD: Int32
    private let wakeup: Wakeup
    private let closed = Atomic<Bool>(false)
    private let serving = Atomic<Bool>(false)

    /// What the receiver answers to a request.
    struct Response: Sendable, Equatable {
        /// The HTTP status code.
        var status: Int
        /// An HTML page for the browser.
        var html: String

        /// Creates a response.
        init(status: Int = 200, html: String) {
            self.status = status
            self.html = html
        }
    }

    /// What the caller makes of a `GET` of the path it waits on.
    enum Decision: Sendable {
        /// The request it waited for: answer it and stop waiting.
        case accept(Response)
        /// Not the one (a forged redirect): answer it and keep waiting.
        case reject(Response)
    }

    /// Bounds on what local clients can make the receiver hold.
    struct Limits: Sendable {
        /// Connections open at once; past that, the oldest is closed.
        var maximumConnections: Int
        /// How long a connection has, from being accepted, to send a complete request head.
        var requestHeadTimeout: Duration
        /// The size and field count of a request head.
        var head: LoopbackRequestHead.Limits

        /// Creates limits; 32 connections, 10 s, and ``LoopbackRequestHead/Limits``' defaults
        /// (16 KiB, 100 fields).
        init(
            maximumConnections: Int = 32,
            requestHeadTimeout: Duration = .seconds(10),
            head: LoopbackRequestHead.Limits = .init()
        ) {
            self.maximumConnections = max(1, maximumConnections)
            self.requestHeadTimeout = requestHeadTimeout
            self.head = head
        }
    }

    /// Why receiving failed.
    struct Failure: Error, Sendable, CustomStringConvertible {
        /// What happened.
        var description: String
        /// `true` when the wait timed out.
        var isTimeout = false
    }

    /// Starts listening on `host` (`127.0.0.1` or `::1`), on a port the system picks.
    init(host: String = "127.0.0.1") throws(Failure) {
        let (fd, port) = try LoopbackSocket.listen(host: host)
        do throws(SystemCallError) {
            wakeup = try Wakeup()
        } catch {
            closeDescriptor(fd)
            throw Failure(description: "\(error)")
        }
        self.listenFD = fd
        self.host = host
        self.port = port
    }

    deinit {
        closeDescriptor(listenFD)
    }

    /// Waits for a `GET` of `path` that `decide` accepts, answering every request on the way.
    ///
    /// - Parameter decide: Called with each well-formed `GET` of `path` to this receiver's
    ///   address, on the receiver's thread.
    /// - Returns: The head of the accepted request.
    /// - Throws: ``Failure`` on timeout, cancellation, or ``close()``.
    func receive(
        path: String,
        timeout: Duration,
        limits: Limits = Limits(),
        decide: @escaping @Sendable (LoopbackRequestHead) -> Decision
    ) async throws(Failure) -> LoopbackRequestHead {
        let deadline = ContinuousClock.now + timeout
        let result: Result<LoopbackRequestHead, Failure> = await withTaskCancellationHandler {
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

    /// Whether a wait is in progress on the receiver's thread: from then on connections are
    /// accepted and answered without any of the cooperative pool's threads. (The tests that play
    /// hostile local clients wait for it, rather than for time.)
    var isServing: Bool { serving.load(ordering: .acquiring) }

    /// Ends a wait in progress and any later one.
    func close() {
        closed.store(true, ordering: .releasing)
        wakeup.signal()
    }

    /// The `host:port` a browser names in `Host` when it follows the redirect URI.
    private var authority: String { host == "::1" ? "[::1]:\(port)" : "\(host):\(port)" }

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
        decide: (LoopbackRequestHead) -> Decision
    ) -> Result<LoopbackRequestHead, Failure> {
        var connections: [Int32: Connection] = [:]
        var accepted: UInt64 = 0
        serving.store(true, ordering: .releasing)
        defer {
            connections.keys.forEach(closeDescriptor)
            serving.store(false, ordering: .releasing)
        }
        while true {
            if closed.load(ordering: .acquiring) {
                return .failure(Failure(description: "stopped waiting for the browser's redirect"))
            }
            let now = ContinuousClock.now
            if now >= deadline {
                return .failure(
                    Failure(description: "no redirect arrived on http://\(authority) in time", isTimeout: true)
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
                return .failure(Failure(description: "poll failed: \(Errno.describe(errno))"))
            }
            // Everything queued, up to the cap: a connection left in the kernel's queue holds a
            // place there, and once the queue is full a new one (the browser's) is dropped and
            // tried again a second later. The cap bounds a turn when local clients flood it.
            var acceptedThisTurn = 0
            while fds[0].revents != 0, acceptedThisTurn < limits.maximumConnections,
                let client = LoopbackSocket.accept(listenFD)
            {
                if connections.count >= limits.maximumConnections,
                    let oldest = connections.min(by: { $0.value.sequence < $1.value.sequence })?.key
                {
                    connections.removeValue(forKey: oldest)
                    closeDescriptor(oldest)
                }
                accepted += 1
                acceptedThisTurn += 1
                connections[client] = Connection(deadline: .now + limits.requestHeadTimeout, sequence: accepted)
            }
            for entry in fds.dropFirst(2) where entry.revents != 0 {
                guard var connection = connections[entry.fd] else { continue }
                // One byte past the limit, so that a head too large is seen as such.
                let room = limits.head.maximumBytes + 1 - connection.head.count
                let read = LoopbackSocket.receive(entry.fd, appendingTo: &connection.head, limit: room)
                connections[entry.fd] = connection
                let answer: Response
                switch LoopbackRequestHead.parse(connection.head, limits: limits.head) {
                case .incomplete:
                    if read != .closed { continue }
                    connections.removeValue(forKey: entry.fd)
                    closeDescriptor(entry.fd)
                    continue
                case .invalid(let problem):
                    answer = Self.page(status: problem.status, "The request was refused: \(problem).")
                case .complete(let head):
                    if let host = head.host, host.lowercased() != authority {
                        answer = Self.page(status: 421, "This server answers requests for \(authority) only.")
                    } else if head.path != path {
                        answer = Self.page(status: 404, "Not found.")
                    } else if head.method != "GET" {
                        answer = Self.page(status: 405, "Only GET is answered here.")
                    } else {
                        switch decide(head) {
                        case .accept(let response):
                            connections.removeValue(forKey: entry.fd)
                            write(response, to: entry.fd)
                            closeDescriptor(entry.fd)
                            return .success(head)
                        case .reject(let response):
                            answer = response
                        }
                    }
                }
                connections.removeValue(forKey: entry.fd)
                write(answer, to: entry.fd)
                closeDescriptor(entry.fd)
            }
        }
    }

    /// Writes `response` to a connection, giving up on the first error (the peer is gone) and
    /// after a second without room in the send buffer (a page this small always fits).
    private func write(_ response: Response, to fd: Int32) {
        let bytes = response.encoded()
        let giveUp = ContinuousClock.now + .seconds(1)
        var sent = 0
        while sent < bytes.count {
            switch bytes.withUnsafeBytes({ sendWithoutSignal(fd, UnsafeRawBufferPointer(rebasing: $0[sent...])) }) {
            case .bytes(let count):
                sent += count
            case .wouldBlock:
                var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                guard poll(&entry, 1, PollTimeout.milliseconds(until: giveUp)) > 0 else { return }
            case .failed:
                return
            }
        }
    }

    private static func page(status: Int, _ message: String) -> Response {
        Response(
            status: status,
            html: "<!doctype html><meta charset=utf-8><title>swift-authrpc sign-in</title><p>\(message)</p>"
        )
    }
}

extension LoopbackRequestReceiver.Response {
    /// The whole HTTP/1.1 response: status line, header fields (a `405` names the method
    /// allowed, as RFC 9110 requires), the page. The connection closes after it.
    func encoded() -> [UInt8] {
        let body = Array(html.utf8)
        let allow = status == 405 ? "Allow: GET\r\n" : ""
        let head =
            "HTTP/1.1 \(status) \(reasonPhrase)\r\nContent-Type: text/html; charset=utf-8\r\n"
            + "Content-Length: \(body.count)\r\nCache-Control: no-store\r\n\(allow)Connection: close\r\n\r\n"
        return Array(head.utf8) + body
    }

    private var reasonPhrase: String {
        switch status {
        case 200: return "OK"
        case 400: return "Bad Request"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 421: return "Misdirected Request"
        case 431: return "Request Header Fields Too Large"
        case 505: return "HTTP Version Not Supported"
        default: return status < 400 ? "OK" : "Error"
        }
    }
}
