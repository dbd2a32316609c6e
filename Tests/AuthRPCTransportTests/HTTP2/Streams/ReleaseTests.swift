import TestSupport
import Testing

@testable import AuthRPCTransport

@Suite("Finished streams hold nothing on the connection")
struct ReleaseTests {
    private static let longDeadline = Duration.seconds(60)

    /// A `Hang` call with a long deadline, waiting until the server has its whole request.
    private func pendingCall(on connection: HTTP2Connection) async throws -> Task<HTTP2Response, any Error> {
        let tag = FaultPeer.newTag()
        let call = Task {
            try await connection.send(FaultPeer.request("Hang", tag: tag, deadline: .now + Self.longDeadline))
        }
        let events = try await FaultPeer.events(tag: tag, on: connection) {
            $0.contains { $0["type"] as? String == "end_stream" }
        }
        #expect(events.contains { $0["type"] as? String == "end_stream" }, "\(events)")
        return call
    }

    @Test("behind one waiting call, 200 finished calls leave no deadline entry, no stream and no bytes behind")
    func finishedCallsAreReleased() async throws {
        let connection = try await FaultPeer.connect()
        let pending = try await pendingCall(on: connection)
        let message = [UInt8](repeating: 0x42, count: 12 << 10)
        for _ in 0..<200 {
            let response = try await connection.send(
                FaultPeer.request("Echo", message: message, deadline: .now + Self.longDeadline)
            )
            #expect(response.body.count == message.count + 5)
        }
        let footprint = await connection.footprint()
        // Only the waiting call is left, and its request body is gone once nghttp2 sent it.
        #expect(footprint == HTTP2ConnectionFootprint(streams: 1, deadlines: 1, retainedBytes: 0), "\(footprint)")

        pending.cancel()
        _ = await pending.result
        #expect(await connection.footprint() == HTTP2ConnectionFootprint(streams: 0, deadlines: 0, retainedBytes: 0))
    }

    @Test("every way a stream ends removes it: server reset, deadline, body limit, cancellation")
    func everyEndingIsReleased() async throws {
        let connection = try await FaultPeer.connect()
        let pending = try await pendingCall(on: connection)
        let deadline = ContinuousClock.now + Self.longDeadline
        await #expect(throws: TransportFailure.streamReset(errorCode: 2)) {
            try await connection.send(FaultPeer.request("RstStream", deadline: deadline))
        }
        await #expect(throws: TransportFailure.deadlineExceeded) {
            try await connection.send(FaultPeer.request("Hang", deadline: .now + .milliseconds(200)))
        }
        await #expect(throws: TransportFailure.responseBodyTooLarge(limit: 64 << 10)) {
            try await connection.send(
                FaultPeer.request(
                    "Oversized",
                    headers: [HTTP2HeaderField(name: "x-fault-size", value: "\(8 << 20)")],
                    deadline: deadline,
                    maxBody: 64 << 10
                )
            )
        }
        let tag = FaultPeer.newTag()
        let cancelled = Task { try await connection.send(FaultPeer.request("Hang", tag: tag, deadline: deadline)) }
        _ = try await FaultPeer.events(tag: tag, on: connection) {
            $0.contains { $0["type"] as? String == "end_stream" }
        }
        cancelled.cancel()
        await #expect(throws: TransportFailure.cancelled) { try await cancelled.value }

        let footprint = await connection.footprint()
        #expect(footprint == HTTP2ConnectionFootprint(streams: 1, deadlines: 1, retainedBytes: 0), "\(footprint)")
        pending.cancel()
        _ = await pending.result
    }
}
