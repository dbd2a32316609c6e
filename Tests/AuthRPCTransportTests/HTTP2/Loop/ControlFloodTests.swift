import AuthRPCTransport
import TestSupport
import Testing

/// Control frames a server can send without limit are bounded by nghttp2's own defaults, which
/// the client relies on (see `ConnectionLoop.startSession`): at most 1000 unsent PING/SETTINGS
/// acknowledgements, at most 32 entries per SETTINGS frame, at most 8 CONTINUATION frames per
/// header block. Past them the connection ends with an error that says so.
@Suite("Control-frame floods end the connection")
struct ControlFloodTests {
    private func failure(_ scenario: String, count: Int) async throws -> TransportFailure? {
        let connection = try await FaultPeer.connect()
        let error = await #expect(throws: TransportFailure.self) {
            try await connection.send(
                FaultPeer.request(
                    scenario,
                    headers: [HTTP2HeaderField(name: "x-fault-count", value: "\(count)")],
                    deadline: .now + .seconds(10)
                )
            )
        }
        #expect(!connection.isAcceptingStreams)
        return error
    }

    @Test("5000 PINGs in one burst: the connection ends as a flood, not with 5000 queued acknowledgements")
    func pingFlood() async throws {
        let error = try await failure("PingFlood", count: 5000)
        #expect(error?.description.contains("Flooding") == true, "\(String(describing: error))")
    }

    @Test("a SETTINGS frame with 1000 entries ends the connection, saying why")
    func settingsFlood() async throws {
        let error = try await failure("SettingsFlood", count: 1000)
        #expect(error?.description.contains("SETTINGS") == true, "\(String(describing: error))")
    }

    @Test("a header block in 100 CONTINUATION frames ends the connection (CVE-2024-28182 bound); 5 are fine")
    func continuationFlood() async throws {
        let connection = try await FaultPeer.connect()
        let fine = try await connection.send(
            FaultPeer.request("ContinuationFlood", headers: [HTTP2HeaderField(name: "x-fault-count", value: "5")])
        )
        #expect(fine.headers.filter { $0.name == "x-c" }.count == 5)
        let error = try await failure("ContinuationFlood", count: 100)
        #expect(error?.description.contains("CONTINUATION") == true, "\(String(describing: error))")
    }
}
