import AuthRPCSystem
import Testing

@testable import OAuth2

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The receiver's socket calls on real loopback sockets.
@Suite("Loopback receiver sockets")
struct LoopbackSocketTests {
    /// Waits (bounded) until `fd` is readable.
    func waitReadable(_ fd: Int32) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 10_000) > 0
    }

    @Test("writes to a connection whose reset was already reported fail with EPIPE and raise no SIGPIPE")
    func writesAfterResetRaiseNoSignal() async throws {
        // On Linux the first send after an RST fails with ECONNRESET without a signal; once that
        // error has been reported (here by the read), every later send is EPIPE and raises
        // SIGPIPE unless the socket or the call says otherwise. SIGPIPE's default action ends
        // this test process.
        let (listener, port) = try LoopbackSocket.listen(host: "127.0.0.1")
        defer { close(listener) }
        for _ in 0..<20 {
            let client = try await RawLoopbackClient.connect(port: port)
            #expect(waitReadable(listener))
            let fd = try #require(LoopbackSocket.accept(listener))
            defer { close(fd) }
            try client.send("GET /cb HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            client.reset()
            var head: [UInt8] = []
            // The request, then the reset.
            var results: [LoopbackSocket.ReadResult] = []
            while results.last != .closed, results.count < 100 {
                #expect(waitReadable(fd))
                results.append(LoopbackSocket.receive(fd, appendingTo: &head, limit: 4096))
            }
            #expect(results.last == .closed)
            #expect(String(decoding: head, as: UTF8.self).hasPrefix("GET /cb"))
            let page = Array("HTTP/1.1 404 Not Found\r\n\r\n".utf8)
            for _ in 0..<3 {
                #expect(page.withUnsafeBytes { sendWithoutSignal(fd, $0) } == .failed(EPIPE))
            }
        }
    }

    @Test("accepted connections are non-blocking and closed on exec (and on Darwin, SO_NOSIGPIPE)")
    func acceptedSocketOptions() async throws {
        let (listener, port) = try LoopbackSocket.listen(host: "127.0.0.1")
        defer { close(listener) }
        #expect(fcntl(listener, F_GETFL) & O_NONBLOCK != 0)
        #expect(fcntl(listener, F_GETFD) & FD_CLOEXEC != 0)
        // Nothing waiting: no connection, no blocking.
        #expect(LoopbackSocket.accept(listener) == nil)
        let client = try await RawLoopbackClient.connect(port: port)
        #expect(waitReadable(listener))
        let fd = try #require(LoopbackSocket.accept(listener))
        defer { close(fd) }
        #expect(fcntl(fd, F_GETFL) & O_NONBLOCK != 0)
        #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0)
        #if canImport(Darwin)
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        #expect(getsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &value, &length) == 0 && value != 0)
        #endif
        var head: [UInt8] = []
        #expect(LoopbackSocket.receive(fd, appendingTo: &head, limit: 10) == .wouldBlock)
        try client.send("GET / HTTP/1.1\r\n")
        #expect(waitReadable(fd))
        #expect(LoopbackSocket.receive(fd, appendingTo: &head, limit: 10) == .bytes(10))
        #expect(LoopbackSocket.receive(fd, appendingTo: &head, limit: 10) == .bytes(6))
        #expect(String(decoding: head, as: UTF8.self) == "GET / HTTP/1.1\r\n")
        withExtendedLifetime(client) {}
    }

    @Test("the listener queues 100 connections before any is accepted: a burst of local clients leaves room")
    func backlogHoldsABurst() async throws {
        let (listener, port) = try LoopbackSocket.listen(host: "127.0.0.1")
        defer { close(listener) }
        // A connect returns once its connection is queued; one that finds the queue full waits
        // for the SYN to be sent again and fails at the limit.
        var clients: [RawLoopbackClient] = []
        for index in 0..<100 {
            do {
                clients.append(try await RawLoopbackClient.connect(port: port, limit: .seconds(5)))
            } catch {
                Issue.record("connection \(index + 1) was not queued: \(error)")
                break
            }
        }
        var accepted = 0
        while let fd = LoopbackSocket.accept(listener) {
            close(fd)
            accepted += 1
        }
        #expect(accepted == 100)
        withExtendedLifetime(clients) {}
    }

    @Test("it listens on 127.0.0.1 and ::1 only")
    func loopbackOnly() throws {
        for host in ["0.0.0.0", "localhost", "192.0.2.1", "::", ""] {
            #expect(throws: LoopbackRequestReceiver.Failure.self, "\(host)") {
                _ = try LoopbackSocket.listen(host: host)
            }
        }
        let (fd, port) = try LoopbackSocket.listen(host: "127.0.0.1")
        close(fd)
        #expect(port > 0)
    }
}
