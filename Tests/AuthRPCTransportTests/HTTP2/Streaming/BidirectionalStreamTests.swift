import AuthRPCTransport
import Foundation
import TestSupport
import Testing

/// Bidirectional streams against grpcio: `authrpc.testing.Stream/Echo` on
/// Tests/Peers/backend_server.py echoes each message, and answers `big:N`, `flood:COUNT:SIZE`
/// and `fail:CODE:TEXT` as commands.
@Suite("HTTP/2 bidirectional streams against grpcio")
struct BidirectionalStreamTests {
    @Test("200 messages ping-pong one at a time, then a half-close ends the call with status 0")
    func pingPong() async throws {
        let (backend, connection) = try await Self.connect()
        defer { backend.process.stop() }
        let stream = connection.openStream(headers: Self.headers(id: "pingpong"))
        for index in 0..<200 {
            let message = Array("ping \(index) ".utf8) + [UInt8](repeating: UInt8(index % 256), count: index * 37)
            try stream.send(message)
            if index == 0 {
                guard case .headers(let status, let fields)? = try await stream.next() else {
                    Issue.record("no header block first")
                    return
                }
                #expect(status == 200)
                #expect(fields.contains(HTTP2HeaderField(name: "content-type", value: "application/grpc")))
            }
            #expect(try await stream.next() == .message(message))
        }
        try stream.finish()
        #expect(try await stream.next() == .message(Array("end:200".utf8)))
        guard case .trailers(let trailers)? = try await stream.next() else {
            Issue.record("no trailers")
            return
        }
        #expect(trailers.contains(HTTP2HeaderField(name: "grpc-status", value: "0")))
        #expect(try await stream.next() == nil)
        #expect(try await Self.serverRecorded("pingpong:halfclosed", backend))
        #expect(throws: TransportFailure.self) { try stream.send([1]) }
    }

    @Test("messages sent before the stream opened and with the half-close all arrive, in order")
    func sendBeforeReading() async throws {
        let (backend, connection) = try await Self.connect()
        defer { backend.process.stop() }
        let stream = connection.openStream(headers: Self.headers(id: "burst"))
        for index in 0..<50 { try stream.send(Array("m\(index)".utf8)) }
        try stream.send(Array("last".utf8), endStream: true)
        var messages: [String] = []
        var trailers: [HTTP2HeaderField] = []
        while let event = try await stream.next() {
            switch event {
            case .message(let bytes): messages.append(String(decoding: bytes, as: UTF8.self))
            case .trailers(let fields): trailers = fields
            case .headers: break
            }
        }
        #expect(messages == (0..<50).map { "m\($0)" } + ["last", "end:51"])
        #expect(trailers.contains(HTTP2HeaderField(name: "grpc-status", value: "0")))
    }

    @Test("a server-side error ends the stream with its status and message in the trailers")
    func serverError() async throws {
        let (backend, connection) = try await Self.connect()
        defer { backend.process.stop() }
        let stream = connection.openStream(headers: Self.headers(id: "error"))
        try stream.send(Array("hello".utf8))
        guard case .headers(let status, _)? = try await stream.next() else {
            Issue.record("no header block first")
            return
        }
        #expect(status == 200)
        #expect(try await stream.next() == .message(Array("hello".utf8)))
        try stream.send(Array("fail:5:no such thing".utf8))
        guard case .trailers(let trailers)? = try await stream.next() else {
            Issue.record("no trailers")
            return
        }
        #expect(trailers.contains(HTTP2HeaderField(name: "grpc-status", value: "5")))
        #expect(trailers.contains(HTTP2HeaderField(name: "grpc-message", value: "no such thing")))
        #expect(try await stream.next() == nil)
    }

    @Test("an error before any answer arrives trailers-only: empty headers, then the trailers")
    func trailersOnly() async throws {
        let (backend, connection) = try await Self.connect()
        defer { backend.process.stop() }
        let stream = connection.openStream(headers: Self.headers(id: "trailers-only"))
        try stream.send(Array("fail:7:denied".utf8))
        #expect(try await stream.next() == .headers(status: 200, fields: []))
        guard case .trailers(let trailers)? = try await stream.next() else {
            Issue.record("no trailers")
            return
        }
        #expect(trailers.contains(HTTP2HeaderField(name: "grpc-status", value: "7")))
        #expect(try await stream.next() == nil)
    }

    @Test("cancel mid-stream resets it: the reader sees cancelled, the server sees the cancel")
    func cancelMidStream() async throws {
        let (backend, connection) = try await Self.connect()
        defer { backend.process.stop() }
        let stream = connection.openStream(headers: Self.headers(id: "cancel"))
        try stream.send(Array("one".utf8))
        _ = try await stream.next()
        #expect(try await stream.next() == .message(Array("one".utf8)))
        stream.cancel()
        await #expect(throws: TransportFailure.cancelled) { try await stream.next() }
        #expect(try await Self.serverRecorded("cancel:cancelled", backend))
        #expect(!(backend.ranIDs.contains("cancel:halfclosed")))
        // The connection goes on carrying streams.
        let next = connection.openStream(headers: Self.headers(id: "after"))
        try next.send(Array("two".utf8), endStream: true)
        _ = try await next.next()
        #expect(try await next.next() == .message(Array("two".utf8)))
    }

    @Test("cancelling the task waiting in next() cancels the stream")
    func taskCancellation() async throws {
        let (backend, connection) = try await Self.connect()
        defer { backend.process.stop() }
        let stream = connection.openStream(headers: Self.headers(id: "task"))
        try stream.send(Array("one".utf8))
        _ = try await stream.next()
        _ = try await stream.next()
        let reader = Task { try await stream.next() }
        reader.cancel()
        await #expect(throws: TransportFailure.cancelled) { try await reader.value }
        #expect(try await Self.serverRecorded("task:cancelled", backend))
    }

    @Test("a message over the limit is refused: the stream is reset, the reader told the limit")
    func oversizeMessage() async throws {
        let (backend, connection) = try await Self.connect()
        defer { backend.process.stop() }
        var limits = HTTP2StreamLimits()
        limits.maxMessageBytes = 1024
        let stream = connection.openStream(headers: Self.headers(id: "oversize"), limits: limits)
        try stream.send(Array("big:1024".utf8))
        _ = try await stream.next()
        #expect(try await stream.next() == .message([UInt8](repeating: UInt8(ascii: "a"), count: 1024)))
        try stream.send(Array("big:1025".utf8))
        await #expect(throws: TransportFailure.responseBodyTooLarge(limit: 1024)) { try await stream.next() }
        #expect(try await Self.serverRecorded("oversize:cancelled", backend))
    }

    @Test("a reader that does not read holds the server back: at most a window of messages waits")
    func backPressure() async throws {
        let (backend, connection) = try await Self.connect { $0.initialStreamWindowSize = 64 << 10 }
        defer { backend.process.stop() }
        let stream = connection.openStream(headers: Self.headers(id: "flood"))
        try stream.send(Array("flood:64:16384".utf8), endStream: true)
        // 64 KiB of window holds three 16 KiB messages (each 16,389 bytes with its prefix).
        try await Self.waitUntil { stream.queuedMessages >= 3 }
        for _ in 0..<100 {
            #expect(stream.queuedMessages <= 3)
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(backend.ranIDs.filter { $0.hasPrefix("flood:flooded:") }.count < 64)
        var received = 0
        while let event = try await stream.next() {
            if case .message(let bytes) = event, bytes.count == 16384 {
                #expect(bytes.allSatisfy { $0 == UInt8(received % 256) })
                received += 1
            }
        }
        #expect(received == 64)
    }

    @Test("a unary exchange's response past the stream window still arrives whole")
    func unaryPastTheWindow() async throws {
        let (backend, connection) = try await Self.connect { $0.initialStreamWindowSize = 64 << 10 }
        defer { backend.process.stop() }
        let response = try await connection.send(
            HTTP2Request(headerBlock: Self.headers(id: "unary"), body: Self.frame(Array("big:300000".utf8)))
        )
        // The 300,000-byte message and `end:1`, each with its 5-byte prefix.
        #expect(response.body.count == 300_015)
        #expect(response.trailers.contains(HTTP2HeaderField(name: "grpc-status", value: "0")))
    }

    @Test("the unsent bytes are bounded: a send past the limit fails instead of queueing")
    func unsentLimit() async throws {
        let (backend, connection) = try await Self.connect()
        defer { backend.process.stop() }
        var limits = HTTP2StreamLimits()
        limits.maxUnsentBytes = 100
        let stream = connection.openStream(headers: Self.headers(id: "unsent"), limits: limits)
        #expect(throws: TransportFailure.self) { try stream.send([UInt8](repeating: 1, count: 96)) }
        try stream.send([UInt8](repeating: 1, count: 95), endStream: true)
        _ = try await stream.next()
        #expect(try await stream.next() == .message([UInt8](repeating: 1, count: 95)))
    }

    @Test("streams on a connection that has closed fail, naming why")
    func closedConnection() async throws {
        let (backend, connection) = try await Self.connect()
        let stream = connection.openStream(headers: Self.headers(id: "closed"))
        try stream.send(Array("x".utf8))
        _ = try await stream.next()
        _ = try await stream.next()
        backend.process.kill()
        await #expect(throws: TransportFailure.self) { try await stream.next() }
        try await Self.waitUntil { !connection.isAcceptingStreams }
        let late = connection.openStream(headers: Self.headers(id: "late"))
        await #expect(throws: TransportFailure.self) { try await late.next() }
    }

    // MARK: - Support

    static func connect(
        configure: (inout HTTP2ConnectionConfiguration) -> Void = { _ in }
    ) async throws -> (BackendInfo, HTTP2Connection) {
        let backend = try await Peers.launchBackend(listen: "127.0.0.1:0", name: "stream")
        var configuration = HTTP2ConnectionConfiguration()
        configure(&configuration)
        let connection = try await HTTP2Connection.connect(
            to: HostAndPort(host: "127.0.0.1", port: backend.port),
            configuration: configuration
        )
        return (backend, connection)
    }

    static func headers(id: String) -> HTTP2HeaderBlock {
        var block = HTTP2HeaderBlock()
        block.append(name: ":method", value: "POST")
        block.append(name: ":scheme", value: "http")
        block.append(name: ":path", value: "/authrpc.testing.Stream/Echo")
        block.append(name: ":authority", value: "127.0.0.1")
        block.append(name: "content-type", value: "application/grpc")
        block.append(name: "te", value: "trailers")
        block.append(name: "x-call-id", value: id)
        return block
    }

    static func frame(_ message: [UInt8]) -> [UInt8] {
        let n = UInt32(message.count)
        return [0, UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + message
    }

    /// Whether the backend recorded `line`, waiting for it (bounded).
    static func serverRecorded(_ line: String, _ backend: BackendInfo) async throws -> Bool {
        do { try await waitUntil { backend.ranIDs.contains(line) } } catch {
            throw PeerError("\(line) not in \(backend.ranIDs)")
        }
        return true
    }

    /// Waits, bounded at 60 s (peers are slow on a loaded machine), for `condition`.
    static func waitUntil(_ condition: () -> Bool) async throws {
        for _ in 0..<6000 {
            if condition() { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw PeerError("timed out waiting for a condition")
    }
}
