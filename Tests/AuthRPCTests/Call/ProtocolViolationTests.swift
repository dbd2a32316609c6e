import AuthRPC
import Foundation
import TestSupport
import Testing

/// What a server that breaks HTTP/2 gets: a connection it breaks while being set up fails at
/// once (`unavailable`, like C-core), never at the call's deadline; a response it breaks fails
/// the call `internal` (a protocol violation, never retried as `unavailable` would be), saying
/// who did what; the server sees the request once.
@Suite("A server that breaks HTTP/2")
struct ProtocolViolationTests {
    @Test("SETTINGS_INITIAL_WINDOW_SIZE of 2^31 in the server's first SETTINGS fails the connection at once")
    func badInitialWindow() async throws {
        let channel = try await FaultChannel.make("h2c_bad_initial_window")
        // Two calls: the attempt ends at once, and the next call is told why without waiting.
        for _ in 0..<2 {
            let error = await #expect(throws: RPCError.self) {
                try await FaultChannel.call(channel, "Echo", options: CallOptions(timeout: .seconds(60)))
            }
            #expect(error?.code == .unavailable, "\(String(describing: error))")
            #expect(error?.message.contains("FLOW_CONTROL_ERROR") == true, "\(String(describing: error))")
            #expect((error?.cause as? TransportError)?.kind == .protocolViolation, "\(String(describing: error))")
        }
    }

    @Test(
        "a connection-level violation on a call's stream fails the call internal, sent once",
        arguments: ["StreamWindowUpdateZero", "DataBeforeHeaders", "ConnectionError"]
    )
    func connectionViolation(scenario: String) async throws {
        let observer = try await FaultChannel.make()
        let channel = try await FaultChannel.make()
        let tag = FaultChannel.newTag()
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(
                channel,
                scenario,
                options: FaultChannel.tagged(tag, CallOptions(timeout: .seconds(60)))
            )
        }
        #expect(error?.code == .internalError, "\(String(describing: error))")
        #expect(error?.message.contains("PROTOCOL_ERROR") == true, "\(String(describing: error))")
        #expect(error?.message.contains("the client ended the connection") == true, "\(String(describing: error))")
        #expect((error?.cause as? TransportError)?.kind == .protocolViolation)
        let events = try await FaultChannel.events(observer, tag: tag) {
            $0.contains { $0["type"] as? String == "connection_closed" }
        }
        #expect(events.filter { $0["type"] as? String == "headers" }.count == 1, "\(events)")
        #expect(events.contains { $0["type"] as? String == "goaway" && $0["error_code"] as? Int == 1 }, "\(events)")
    }

    @Test("a stream the client resets itself (content-length mismatch) is not 'reset by the server'")
    func contentLengthMismatch() async throws {
        let channel = try await FaultChannel.make()
        let tag = FaultChannel.newTag()
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(channel, "ContentLengthMismatch", options: FaultChannel.tagged(tag))
        }
        #expect(error?.code == .internalError, "\(String(describing: error))")
        #expect(error?.message.contains("reset by the server") == false, "\(String(describing: error))")
        #expect(error?.message.contains("the client reset the stream with PROTOCOL_ERROR") == true)
        #expect((error?.cause as? TransportError)?.kind == .protocolViolation)
        // The reset is the client's, on the wire; the connection goes on.
        let events = try await FaultChannel.events(channel, tag: tag) {
            $0.contains { $0["type"] as? String == "rst_stream" }
        }
        #expect(events.contains { $0["type"] as? String == "rst_stream" && $0["error_code"] as? Int == 1 }, "\(events)")
    }

    @Test("a reset the server sends is still reported as the server's")
    func serverReset() async throws {
        let channel = try await FaultChannel.make()
        var options = CallOptions()
        options.initialMetadata.addString("2", forKey: "x-fault-code")
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(channel, "RstStream", options: options)
        }
        #expect(error?.code == .internalError)
        #expect(error?.message.contains("reset by the server (INTERNAL_ERROR)") == true, "\(String(describing: error))")
    }
}
