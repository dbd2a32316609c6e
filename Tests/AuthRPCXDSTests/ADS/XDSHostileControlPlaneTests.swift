import AuthRPCTransport
import Foundation
import TestSupport
import Testing

@testable import AuthRPCXDS

/// The live ADS client against a control plane that turns hostile once the client has a good
/// config: bytes that are no DiscoveryResponse, a response over the size bound, one with too many
/// resources, and a flood of updates. Each ends the stream or is answered, the cache is kept
/// throughout, and the client comes back to the good config (Tests/Peers/xds_control_plane.py's
/// `inject`, on real grpcio HTTP/2).
@Suite("The ADS client against a hostile control plane")
struct XDSHostileControlPlaneTests {
    @Test("bytes that are no DiscoveryResponse end the stream; the cache is kept and a new stream ACKs again")
    func garbage() async throws {
        try await afterGoodConfig { plane, client in
            try plane.command(["op": "garbage"])
            try await XDSADSClientTests.waitUntil {
                await client.lastStreamFailure?.contains("does not decode") == true
            }
            try await Self.comesBack(plane, client)
        }
    }

    @Test("a response over the message bound resets the stream before it is read whole; the cache is kept")
    func oversize() async throws {
        var limits = HTTP2StreamLimits()
        limits.maxMessageBytes = 64 << 10
        try await afterGoodConfig(limits: limits) { plane, client in
            try plane.command(["op": "oversize", "bytes": 200_000])
            try await XDSADSClientTests.waitUntil {
                await client.lastStreamFailure?.contains("larger than the limit of \(64 << 10) bytes") == true
            }
            try await Self.comesBack(plane, client)
        }
    }

    @Test("a response with more resources than the bound is refused whole, naming the bound")
    func tooManyResources() async throws {
        try await afterGoodConfig { plane, client in
            try plane.command(["op": "too_many", "count": XDSLimits.resourcesPerResponse + 1])
            try await XDSADSClientTests.waitUntil {
                await client.lastStreamFailure?.contains("more than \(XDSLimits.resourcesPerResponse) resources")
                    == true
            }
            // Nothing of it was taken: the version in use is still the good one.
            #expect(await client.ackedVersion(.cluster) != "many")
            try await Self.comesBack(plane, client)
        }
    }

    @Test("2,000 updates back to back are each ACKed on the one stream, and only the last is kept")
    func flood() async throws {
        try await afterGoodConfig { plane, client in
            try plane.command(["op": "flood", "cluster": "c1", "eds": "c1-eds", "count": 2000])
            try await XDSADSClientTests.waitUntil { await client.ackedVersion(.cluster) == "flood-2000" }
            try await XDSADSClientTests.waitUntil { (try? XDSADSClientTests.unacked(plane).isEmpty) == true }
            #expect(await client.streamsStarted == 1)
            #expect(await client.lastStreamFailure == nil)
            #expect(await client.entry(.cluster, "c1")?.resource != nil)
            #expect(await client.entry(.cluster, "c1")?.nackReason == nil)
        }
    }

    @Test("by default a response may be as large as XDSLimits.responseBytes, not the transport's 4 MiB")
    func defaultBound() {
        #expect(XDSADSClient.Settings.defaultLimits.maxMessageBytes == XDSLimits.responseBytes)
        #expect(XDSLimits.responseBytes > HTTP2StreamLimits().maxMessageBytes)
    }

    // MARK: - Support

    /// Runs `body` once the client has ACKed the whole basic config, then stops both.
    private func afterGoodConfig(
        limits: HTTP2StreamLimits = XDSADSClient.Settings.defaultLimits,
        _ body: (ControlPlaneProcess, XDSADSClient) async throws -> Void
    ) async throws {
        let plane = try await ControlPlaneProcess.launch()
        defer { plane.process.stop() }
        try plane.command(XDSADSClientTests.basic)
        let client = XDSADSClientTests.client(plane, limits: limits)
        await client.start()
        await XDSADSClientTests.subscribeAll(client)
        // The endpoints come last, so every response has been sent once the client has them; only
        // then does "all ACKed" mean the control plane has read every ACK. A stream the test
        // breaks drops the ACKs it has not read yet (grpcio drops what a cancelled stream had
        // not delivered), and an ACK lost that way would never be seen on the next stream.
        try await XDSADSClientTests.waitUntil { await client.entry(.endpoints, "c1-eds")?.resource != nil }
        try await XDSADSClientTests.waitUntil { (try? XDSADSClientTests.unacked(plane).isEmpty) == true }
        do {
            try await body(plane, client)
        } catch {
            await client.stop()
            throw error
        }
        await client.stop()
    }

    /// The cache outlived the bad stream, and the next stream takes the good config again.
    private static func comesBack(_ plane: ControlPlaneProcess, _ client: XDSADSClient) async throws {
        for (type, name) in XDSADSClientTests.names { #expect(await client.entry(type, name)?.resource != nil) }
        try await XDSADSClientTests.waitUntil { await client.streamsStarted >= 2 }
        // The new stream asks again (a listener request answering no nonce, as each stream's
        // first does), is answered with the good config, and ACKs each answer.
        try await XDSADSClientTests.waitUntil {
            let firsts = try? plane.requests().filter {
                $0["type_url"] as? String == XDSResourceType.listener.typeURL && $0["response_nonce"] as? String == ""
            }
            return (firsts?.count ?? 0) >= 2
        }
        try await XDSADSClientTests.waitUntil {
            (try? XDSADSClientTests.unacked(plane, allowingNacks: true).isEmpty) == true
        }
        #expect(await client.entry(.cluster, "c1")?.nackReason == nil)
    }
}
