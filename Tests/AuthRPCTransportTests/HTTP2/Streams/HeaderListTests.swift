import AuthRPCTransport
import Foundation
import TestSupport
import Testing

/// Response header blocks are bounded as RFC 9113 sizes them (name + value + 32 per field),
/// against a server that sends one 4,000-byte header, indexed once in HPACK and then referenced
/// by one byte per field: tens of kilobytes on the wire that would decode to tens of megabytes.
@Suite("Response header lists are bounded")
struct HeaderListTests {
    private static let limit = 16 << 10

    private func flood(_ count: Int, size: Int = 4000, where place: String = "headers") -> [HTTP2HeaderField] {
        [
            HTTP2HeaderField(name: "x-fault-count", value: "\(count)"),
            HTTP2HeaderField(name: "x-fault-size", value: "\(size)"),
            HTTP2HeaderField(name: "x-fault-where", value: place),
        ]
    }

    @Test(
        "a flood in the response headers, the trailers or a 1xx block fails the stream at the limit; the connection goes on",
        arguments: ["headers", "trailers", "informational"]
    )
    func floodIsRefused(place: String) async throws {
        let connection = try await FaultPeer.connect()
        await #expect(throws: TransportFailure.responseHeaderListTooLarge(limit: Self.limit)) {
            try await connection.send(FaultPeer.request("HeaderFlood", headers: flood(20_000, where: place)))
        }
        #expect(try await connection.send(FaultPeer.request("Echo")).status == 200)
        #expect(await connection.footprint() == HTTP2ConnectionFootprint(streams: 0, deadlines: 0, retainedBytes: 0))
    }

    @Test("the stream is reset on the wire while the server still holds it open")
    func floodResetsTheStream() async throws {
        let connection = try await FaultPeer.connect()
        for place in ["headers", "informational"] {
            let tag = FaultPeer.newTag()
            await #expect(throws: TransportFailure.responseHeaderListTooLarge(limit: Self.limit)) {
                try await connection.send(
                    FaultPeer.request(
                        "HeaderFlood",
                        tag: tag,
                        headers: flood(20_000, where: place) + [HTTP2HeaderField(name: "x-fault-hang", value: "1")]
                    )
                )
            }
            // nghttp2 answers a stopped header block with RST_STREAM(INTERNAL_ERROR).
            let events = try await FaultPeer.events(tag: tag, on: connection) { FaultPeer.hasReset($0, code: 2) }
            #expect(FaultPeer.hasReset(events, code: 2), "\(place): \(events)")
        }
    }

    @Test("the limit is exact: a block of exactly 16384 bytes is accepted, one byte more is not")
    func exactBoundary() async throws {
        let connection = try await FaultPeer.connect()
        // :status 200 (7 + 3 + 32) + content-type application/grpc (12 + 16 + 32) + x-flood (7 + size + 32).
        let fitting = Self.limit - 42 - 60 - 39
        let response = try await connection.send(FaultPeer.request("HeaderFlood", headers: flood(1, size: fitting)))
        #expect(response.headers.first { $0.name == "x-flood" }?.value.utf8.count == fitting)
        await #expect(throws: TransportFailure.responseHeaderListTooLarge(limit: Self.limit)) {
            try await connection.send(FaultPeer.request("HeaderFlood", headers: flood(1, size: fitting + 1)))
        }
    }

    @Test("a configured limit is announced in SETTINGS_MAX_HEADER_LIST_SIZE and enforced")
    func configuredLimit() async throws {
        let standard = try await FaultPeer.connect()
        #expect(
            try FaultPeer.json(try await standard.send(FaultPeer.request("ClientSettings")))["max_header_list_size"]
                as? Int == Self.limit
        )

        let raised = try await FaultPeer.connect { $0.maxHeaderListSize = 64 << 10 }
        #expect(
            try FaultPeer.json(try await raised.send(FaultPeer.request("ClientSettings")))["max_header_list_size"]
                as? Int == 64 << 10
        )
        let response = try await raised.send(FaultPeer.request("HeaderFlood", headers: flood(10)))
        #expect(response.headers.filter { $0.name == "x-flood" }.count == 10)
        await #expect(throws: TransportFailure.responseHeaderListTooLarge(limit: 64 << 10)) {
            try await raised.send(FaultPeer.request("HeaderFlood", headers: flood(20)))
        }
    }

    @Test("a few 1xx blocks are skipped; an endless run of them fails the stream")
    func informationalBlocksAreCounted() async throws {
        let connection = try await FaultPeer.connect()
        let fine = try await connection.send(
            FaultPeer.request("InformationalFlood", headers: [HTTP2HeaderField(name: "x-fault-count", value: "8")])
        )
        #expect(fine.status == 200)
        let error = await #expect(throws: TransportFailure.self) {
            try await connection.send(
                FaultPeer.request(
                    "InformationalFlood",
                    headers: [HTTP2HeaderField(name: "x-fault-count", value: "10000")]
                )
            )
        }
        guard case .protocolError(let reason)? = error else {
            Issue.record("expected a protocol error, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("informational"), "\(reason)")
        #expect(try await connection.send(FaultPeer.request("Echo")).status == 200)
    }
}
