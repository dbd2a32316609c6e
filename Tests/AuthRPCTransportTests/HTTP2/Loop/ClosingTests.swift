import AuthRPCSystem
import AuthRPCTransport
import TestSupport
import Testing

/// The connection ends while nghttp2 is still sending request bodies. Run these under
/// `swift test --sanitize=address` too: a released stream read by nghttp2's body callback shows
/// there as a heap-use-after-free.
@Suite("Closing while request bodies are in flight")
struct ClosingTests {
    /// 48 calls, each with a 1 MiB request body, on one connection; returns once the server has
    /// seen some of them start.
    private func uploads(
        on connection: HTTP2Connection,
        observer: HTTP2Connection
    ) async throws -> [Task<HTTP2Response, any Error>] {
        let tag = FaultPeer.newTag()
        let body = [UInt8](repeating: 0x55, count: 1 << 20)
        let calls = (0..<48).map { _ in
            Task { try await connection.send(FaultPeer.request("Hang", tag: tag, message: body)) }
        }
        _ = try await FaultPeer.events(tag: tag, on: observer) { $0.contains { $0["type"] as? String == "headers" } }
        return calls
    }

    @Test("an immediate close while bodies are being sent fails every call, and nothing touches a released stream")
    func closeDuringUploads() async throws {
        let observer = try await FaultPeer.connect()
        for _ in 0..<6 {
            let connection = try await FaultPeer.connect()
            let calls = try await uploads(on: connection, observer: observer)
            connection.close()
            for call in calls {
                await #expect(throws: TransportFailure.self) { try await call.value }
            }
            #expect(
                await connection.footprint() == HTTP2ConnectionFootprint(streams: 0, deadlines: 0, retainedBytes: 0)
            )
        }
    }

    @Test("a keepalive timeout while bodies are being sent fails every call, and nothing touches a released stream")
    func keepaliveTimeoutDuringUploads() async throws {
        let observer = try await FaultPeer.connect()
        for _ in 0..<6 {
            let connection = try await FaultPeer.connect("h2c_no_ping_ack") {
                $0.keepaliveInterval = .milliseconds(20)
                $0.keepaliveTimeout = .milliseconds(60)
            }
            let calls = try await uploads(on: connection, observer: observer)
            for call in calls {
                await #expect(throws: TransportFailure.self) { try await call.value }
            }
            #expect(!connection.isAcceptingStreams)
        }
    }

    @Test("a request sent right behind an immediate close is answered at once as not sent, never left waiting")
    func sendBehindClose() async throws {
        for _ in 0..<20 {
            let connection = try await FaultPeer.connect()
            connection.close()
            // Both commands usually reach the I/O thread in one batch, the close first.
            let outcome = Outcome()
            Task {
                let result: Result<HTTP2Response, TransportFailure>
                do throws(TransportFailure) {
                    result = .success(try await connection.send(FaultPeer.request("Echo")))
                } catch { result = .failure(error) }
                outcome.value.withLock { $0 = result }
            }
            // Bounded, so the test ends even when the send is never answered.
            for _ in 0..<100 where outcome.value.withLock({ $0 == nil }) {
                try await Task.sleep(for: .milliseconds(100))
            }
            guard case .failure(let error)? = outcome.value.withLock({ $0 }) else {
                Issue.record("expected a not-sent failure, got \(String(describing: outcome.value.withLock { $0 }))")
                return
            }
            #expect(error.isRetrySafe, "\(error)")
        }
    }
}

/// Where a detached send leaves its result.
private final class Outcome: Sendable {
    let value = Locked<Result<HTTP2Response, TransportFailure>?>(nil)
}
