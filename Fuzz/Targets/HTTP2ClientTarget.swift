import Foundation
import Synchronization

@testable import AuthRPC
@testable import AuthRPCTransport

#if canImport(Glibc)
import Glibc
#endif

/// The HTTP/2 client itself (its I/O thread, nghttp2 session and stream bookkeeping) against a
/// hostile server: a real connection on loopback whose server side, after a valid SETTINGS
/// preface and once the client's one request is in flight, writes the input as its bytes and
/// closes. The call must end (an answer or an error), the connection's thread must finish, and
/// no descriptor or thread may be left behind.
///
/// Input: the server's bytes after its SETTINGS frame (SETTINGS ACK, HEADERS, DATA, ... for
/// stream 1, in HTTP/2 framing with HPACK).
enum HTTP2ClientTarget {
    /// How long any one step may take before the run counts as a hang.
    static let stepTimeout: Int32 = 5_000
    /// The request's response body limit (the gRPC default message limit and its prefix).
    static let maxResponseBodyBytes = (4 << 20) + 5
    /// The room of the buffer lent to the response body (a call lends one its thread kept).
    static let lentResponseBytes = 64

    static func run(_ bytes: [UInt8]) throws(OracleViolation) {
        _ = try play(bytes)
    }

    /// Runs one input; what the client made of the answer (``ClientOutcome/answer``).
    static func play(_ bytes: [UInt8]) throws(OracleViolation) -> String {
        let server = try Listener.shared.get()
        server.turn.lock()
        defer { server.turn.unlock() }
        let outcome = ClientOutcome()
        let port = server.port
        Task(executorPreference: ClientThreadExecutor.shared) {
            await outcome.play(port: port, tls: nil)
        }

        let connection: Int32
        do throws(OracleViolation) {
            connection = try server.accept()
        } catch {
            // Says whether the client's task ran at all, or started and never reached connect().
            throw OracleViolation(
                "\(error) (the client's task \(outcome.started.load(ordering: .acquiring) ? "started" : "never started"))"
            )
        }
        defer { close(connection) }
        // An empty SETTINGS frame: the server's preface.
        try send([0, 0, 0, 4, 0, 0, 0, 0, 0], to: connection)
        try waitForRequestHeaders { buffer throws(OracleViolation) in
            guard waitFor(POLLIN, on: connection) else { throw OracleViolation("the client's request never arrived") }
            while true {
                let count = recv(connection, buffer.baseAddress, buffer.count, 0)
                if count < 0 && errno == EINTR { continue }
                return max(count, 0)
            }
        }
        // The server's bytes; a client that closed early makes the rest fail, which is fine.
        _ = try? send(bytes, to: connection)
        shutdown(connection, Int32(SHUT_WR))
        drain(connection)

        guard outcome.finished.wait(timeout: .now() + .milliseconds(Int(stepTimeout))) == .success else {
            throw OracleViolation("the call did not end within \(stepTimeout) ms after the server closed")
        }
        guard outcome.closed.wait(timeout: .now() + .milliseconds(Int(stepTimeout))) == .success else {
            throw OracleViolation("the connection's thread did not end within \(stepTimeout) ms")
        }
        if let violation = outcome.violation.withLock({ $0 }) { throw violation }
        try ResourceWatch.check()
        return outcome.answer.withLock { $0 }
    }

    /// The client side: connects (over TLS with `tls`), sends one gRPC-shaped request, decodes
    /// what comes back.
    final class ClientOutcome: Sendable {
        let finished = DispatchSemaphore(value: 0)
        let closed = DispatchSemaphore(value: 0)
        let violation = Mutex<OracleViolation?>(nil)
        let started = Atomic<Bool>(false)
        /// What the call came to: "OK" and the message's size, or the failure's status code.
        let answer = Mutex("no answer")

        func play(port: Int, tls: TLSContext?) async {
            started.store(true, ordering: .releasing)
            defer { finished.signal() }
            var configuration = HTTP2ConnectionConfiguration()
            configuration.tls = tls
            configuration.connectTimeout = .milliseconds(Int64(HTTP2ClientTarget.stepTimeout))
            let closed = self.closed
            let connection: HTTP2Connection
            do {
                connection = try await HTTP2Connection.connect(
                    to: HostAndPort(host: "127.0.0.1", port: port),
                    configuration: configuration
                ) { event in
                    if case .closed = event { closed.signal() }
                }
            } catch {
                violation.withLock {
                    $0 = OracleViolation("the client could not connect to a server that sent SETTINGS: \(error)")
                }
                closed.signal()
                return
            }
            var request = HTTP2Request(
                scheme: tls == nil ? "http" : "https",
                authority: "fuzz.test",
                path: "/fuzz.Fuzz/Call",
                headers: [
                    HTTP2HeaderField(name: "content-type", value: "application/grpc"),
                    HTTP2HeaderField(name: "te", value: "trailers"),
                ],
                body: Framing.frame(Array("hello".utf8), compressed: false),
                maxResponseBodyBytes: HTTP2ClientTarget.maxResponseBodyBytes
            )
            // A lent buffer for the body to start in, as a call's kept one is: hostile bodies
            // that fit it and ones that outgrow it.
            request.responseBuffer.reserveCapacity(HTTP2ClientTarget.lentResponseBytes)
            do {
                let response = try await connection.send(consume request)
                if response.body.count > HTTP2ClientTarget.maxResponseBodyBytes {
                    violation.withLock {
                        $0 = OracleViolation("a response body of \(response.body.count) bytes passed the limit")
                    }
                }
                // A prefix may declare any length: the body grows by at most four times what
                // arrived (plus the allocator's rounding), never to what was only declared.
                if response.body.capacity > 4 * response.body.count + 4096 {
                    violation.withLock {
                        $0 = OracleViolation(
                            "a response body of \(response.body.count) bytes holds \(response.body.capacity) bytes of room"
                        )
                    }
                }
                let decoded = ResponseDecoder.decode(response, deserializer: RawBytesCodec(), maxMessageBytes: 4 << 20)
                answer.withLock {
                    switch decoded {
                    case .success(let response): $0 = "OK, \(response.message.count) bytes"
                    case .failure(let error): $0 = "\(error.code)"
                    }
                }
            } catch {
                let error = RPCError(transportFailure: error, deadline: nil)
                _ = error.description
                answer.withLock { $0 = "\(error.code)" }
            }
        }
    }

    /// Waits until the client's HEADERS for stream 1 arrived (after its 24-byte preface), reading
    /// what the client sent with `receive` (the count read; 0 when the client closed).
    static func waitForRequestHeaders(
        receive: (UnsafeMutableRawBufferPointer) throws(OracleViolation) -> Int
    ) throws(OracleViolation) {
        var received: [UInt8] = []
        var offset = 24
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
        defer { buffer.deallocate() }
        while true {
            while received.count >= offset + 9 {
                let length = Int(received[offset]) << 16 | Int(received[offset + 1]) << 8 | Int(received[offset + 2])
                let type = received[offset + 3]
                let stream =
                    (UInt32(received[offset + 5]) << 24 | UInt32(received[offset + 6]) << 16
                        | UInt32(received[offset + 7]) << 8 | UInt32(received[offset + 8])) & 0x7FFF_FFFF
                if type == 1 && stream == 1 { return }
                offset += 9 + length
            }
            let count = try receive(buffer)
            guard count > 0 else { throw OracleViolation("the client closed before sending its request") }
            received += buffer[0..<count]
        }
    }

    static func send(_ bytes: [UInt8], to connection: Int32) throws(OracleViolation) {
        var sent = 0
        while sent < bytes.count {
            guard waitFor(POLLOUT, on: connection) else { throw OracleViolation("the client stopped reading") }
            let count = bytes.withUnsafeBytes {
                Glibc.send(connection, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw OracleViolation("the client closed") }
            sent += count
        }
    }

    /// Waits up to ``stepTimeout`` for `events` on `fd`; true once they came. poll(2) is resumed
    /// when a signal interrupts it: libFuzzer's `-timeout` watchdog sends SIGALRM every few
    /// seconds, and an interrupted wait taken for a timeout made a false finding.
    static func waitFor(_ events: Int32, on fd: Int32) -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(stepTimeout))
        while true {
            let left = ContinuousClock.now.duration(to: deadline).components
            let milliseconds = Int32(clamping: max(0, left.seconds * 1000 + left.attoseconds / 1_000_000_000_000_000))
            var entry = pollfd(fd: fd, events: Int16(events), revents: 0)
            let ready = poll(&entry, 1, milliseconds)
            if ready > 0 { return true }
            if ready == 0 || errno != EINTR { return false }
        }
    }

    /// Reads (and drops) what the client sends until it closes, so its writes never block.
    static func drain(_ connection: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            guard waitFor(POLLIN, on: connection) else { return }
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return }
        }
    }

    /// A listening socket on 127.0.0.1; one per target and process (the replay test runs
    /// targets at once, and each must accept its own client).
    final class Listener: Sendable {
        static let shared: Result<Listener, OracleViolation> = Result { () throws(OracleViolation) in try Listener() }

        let fd: Int32
        let port: Int
        /// Held for a whole run, so runs of one target from two threads (the replay test and a
        /// test of the harness) never accept each other's client.
        let turn = NSLock()

        init() throws(OracleViolation) {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let status = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                    bind(fd, raw, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, raw, &length) == 0
                        ? Int32(0) : -1
                }
            }
            guard fd >= 0, status == 0 else { throw OracleViolation("cannot listen on 127.0.0.1: errno \(errno)") }
            self.fd = fd
            self.port = Int(UInt16(bigEndian: address.sin_port))
        }

        func accept() throws(OracleViolation) -> Int32 {
            var connection: Int32 = -1
            repeat {
                guard HTTP2ClientTarget.waitFor(POLLIN, on: fd) else {
                    throw OracleViolation("the client never connected")
                }
                connection = Glibc.accept(fd, nil, nil)
            } while connection < 0 && errno == EINTR
            guard connection >= 0 else { throw OracleViolation("accept failed: errno \(errno)") }
            return connection
        }
    }
}

/// Descriptors and threads left behind by finished connections.
enum ResourceWatch {
    private static let state = Mutex<(runs: Int, baseline: (fds: Int, threads: Int)?)>((0, nil))

    /// Every 256 runs, compares the process's open descriptors and threads with those after the
    /// first 256; a connection that leaks either grows them by one per run.
    static func check() throws(OracleViolation) {
        let due = state.withLock { state -> Bool in
            state.runs += 1
            return state.runs % 256 == 0
        }
        guard due else { return }
        let now = (
            fds: (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0,
            threads: threadCount()
        )
        let baseline = state.withLock { state in
            if state.baseline == nil { state.baseline = now }
            return state.baseline!
        }
        // The cooperative pool and Foundation may start a few threads of their own.
        try require(now.fds <= baseline.fds + 16, "open descriptors grew from \(baseline.fds) to \(now.fds)")
        try require(now.threads <= baseline.threads + 16, "threads grew from \(baseline.threads) to \(now.threads)")
    }

    private static func threadCount() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Threads:") })
        else { return 0 }
        return Int(line.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces)) ?? 0
    }
}
