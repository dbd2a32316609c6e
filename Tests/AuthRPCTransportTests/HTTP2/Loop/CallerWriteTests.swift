import AuthRPCSystem
import TestSupport
import Testing

@testable import AuthRPCTransport

/// A call on an idle connection is submitted and written by its caller while the I/O thread
/// sleeps (`ConnectionLoop.submitHere`): the thread is woken by the answer only, unless the call
/// brings something its sleep does not cover.
@Suite("Requests written by their caller on an idle connection")
struct CallerWriteTests {
    private static let nothingHeld = HTTP2ConnectionFootprint(streams: 0, deadlines: 0, retainedBytes: 0)

    /// Waits until the connection's I/O thread sleeps with nothing open or queued.
    private func idle(_ connection: HTTP2Connection) async {
        while !connection.loop.sleepsIdle { await Task.yield() }
    }

    private func wakeups(_ connection: HTTP2Connection) -> Int {
        connection.loop.inbox.withLock { $0.wakeupsSignalled }
    }

    private func connectTLS() async throws -> HTTP2Connection {
        let sandbox = try await Peers.sandbox()
        var tls = TLSClientConfiguration()
        tls.trustsSystemRoots = false
        tls.additionalTrustRootsPEM = [sandbox.caCertificatePEM]
        let context = try TLSContext(tls)
        return try await FaultPeer.connect("tls") { $0.tls = context }
    }

    @Test("calls one after another on an idle connection, h2c and TLS, wake the I/O thread for none of their requests")
    func sequentialCallsWakeNothing() async throws {
        for (connection, scheme) in [(try await FaultPeer.connect(), "http"), (try await connectTLS(), "https")] {
            let before = wakeups(connection)
            for index in 0..<20 {
                await idle(connection)
                let message = Array("call \(index)".utf8)
                let response = try await connection.send(FaultPeer.request("Echo", message: message, scheme: scheme))
                #expect(Array(response.body.dropFirst(5)) == message, "\(scheme) call \(index)")
            }
            #expect(wakeups(connection) == before, "\(scheme): the I/O thread was woken for a request")
            #expect(await connection.footprint() == Self.nothingHeld)
            connection.close()
        }
    }

    @Test("a deadline the sleeping I/O thread did not know of wakes it once, and ends the call on time")
    func deadlineWakesTheLoop() async throws {
        let connection = try await FaultPeer.connect()
        _ = try await connection.send(FaultPeer.request("Echo"))
        await idle(connection)
        let before = wakeups(connection)
        let started = ContinuousClock.now
        await #expect(throws: TransportFailure.deadlineExceeded) {
            try await connection.send(FaultPeer.request("Hang", deadline: .now + .milliseconds(300)))
        }
        let elapsed = ContinuousClock.now - started
        #expect(elapsed >= .milliseconds(300) && elapsed < .seconds(10), "\(elapsed)")
        #expect(wakeups(connection) == before + 1)
        #expect(await connection.footprint() == Self.nothingHeld)
        connection.close()
    }

    @Test("a caller-written call that is cancelled is reset and leaves nothing behind")
    func cancelled() async throws {
        let connection = try await FaultPeer.connect()
        // The server's record is read on a connection of its own, so that `connection` carries
        // the one call only.
        let observer = try await FaultPeer.connect()
        _ = try await connection.send(FaultPeer.request("Echo"))
        await idle(connection)
        let before = wakeups(connection)
        let tag = FaultPeer.newTag()
        let call = Task { try await connection.send(FaultPeer.request("Hang", tag: tag)) }
        _ = try await FaultPeer.events(tag: tag, on: observer) {
            $0.contains { $0["type"] as? String == "end_stream" }
        }
        #expect(wakeups(connection) == before, "the request was queued for the I/O thread")
        call.cancel()
        await #expect(throws: TransportFailure.cancelled) { try await call.value }
        let events = try await FaultPeer.events(tag: tag, on: observer) { FaultPeer.hasReset($0, code: 8) }
        #expect(FaultPeer.hasReset(events, code: 8), "\(events)")
        #expect(await connection.footprint() == Self.nothingHeld)
        connection.close()
        observer.close()
    }
}
