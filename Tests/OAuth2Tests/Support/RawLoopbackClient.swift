import AuthRPCSystem
import Foundation
import TestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A plain TCP client on 127.0.0.1 for playing hostile local processes against the loopback
/// redirect receiver: it can connect and say nothing, send part of a request, or a whole one,
/// and reset the connection. Its waits (connecting included) run on a thread of their own, never
/// on one of Swift's cooperative threads: the flow under test needs those, and the pool has one
/// per core.
final class RawLoopbackClient: @unchecked Sendable {
    // Confined: each method runs to completion before the next is called (tests await them in turn).
    private let fd: Int32
    private var isOpen = true

    /// Connects to `127.0.0.1:port`, failing after `limit` (on Linux). A connect blocks while
    /// the listener's queue is full (the kernel drops the SYN and the client sends it again a
    /// second later, then three), so it runs on a thread of its own.
    static func connect(port: Int, limit: Duration = .seconds(30)) async throws -> RawLoopbackClient {
        let client = try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                let result = Result { try RawLoopbackClient(port: port, limit: limit) }
                // A connect that succeeds at once resumes the task before it has suspended, an
                // ordering ThreadSanitizer cannot see (Tests/tsan-suppressions.txt).
                if case .success(let client) = result { ThreadSanitizerHandoff.publish(client) }
                continuation.resume(with: result)
            }
        }
        ThreadSanitizerHandoff.receive(client)
        return client
    }

    private init(port: Int, limit: Duration) throws {
        #if canImport(Glibc)
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw PeerError("socket failed") }
        // Linux bounds a blocking connect by the send timeout.
        var timeout = timeval(tv_sec: Int(limit.components.seconds), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                #if canImport(Glibc)
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                #else
                Darwin.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                #endif
            }
        }
        guard status == 0 else {
            close(fd)
            throw PeerError("connect to 127.0.0.1:\(port) failed: errno \(errno)")
        }
    }

    deinit {
        if isOpen { close(fd) }
    }

    /// Resets the connection: closes it with a zero linger time, so the kernel sends RST (not
    /// FIN) and drops anything unsent or unread.
    func reset() {
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        close(fd)
        isOpen = false
    }

    /// Sends all of `text` (a request, or part of one).
    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                #if canImport(Glibc)
                Glibc.send(fd, buffer.baseAddress! + sent, buffer.count - sent, Int32(MSG_NOSIGNAL))
                #else
                Darwin.send(fd, buffer.baseAddress! + sent, buffer.count - sent, 0)
                #endif
            }
            guard count > 0 else { throw PeerError("send failed: errno \(errno)") }
            sent += count
        }
    }

    /// Reads until the server closes the connection or `limit` passes (polling; bounded).
    /// Returns what arrived and whether the connection was closed (or reset) by the server.
    func readUntilClosed(limit: Duration) async -> (text: String, closed: Bool) {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: self.blockingRead(limit: limit)) }
        }
    }

    private func blockingRead(limit: Duration) -> (text: String, closed: Bool) {
        var received: [UInt8] = []
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 50) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return (String(decoding: received, as: UTF8.self), true) }
            received += chunk[0..<count]
        }
        return (String(decoding: received, as: UTF8.self), false)
    }

    /// The status code of the answer, once the server has answered and closed.
    func status(limit: Duration = .seconds(10)) async -> Int? {
        let (text, _) = await readUntilClosed(limit: limit)
        guard text.hasPrefix("HTTP/1.1 ") else { return nil }
        return Int(text.dropFirst(9).prefix(3))
    }
}
