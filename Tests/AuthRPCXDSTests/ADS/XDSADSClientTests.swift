import AuthRPCTransport
import Foundation
import TestSupport
import Testing

@testable import AuthRPCXDS

/// The live ADS client against the project's control plane (grpcio + xds-protos,
/// Tests/Peers/xds_control_plane.py, which grpcio's own xDS client passes as the reference), with
/// the ACKs and NACKs read from what the control plane received.
@Suite("The ADS client against the test control plane")
struct XDSADSClientTests {
    static let basic: [String: any Sendable] = [
        "op": "basic", "listener": "svc", "route": "svc-routes", "cluster": "c1", "eds": "c1-eds",
        "backends": [["127.0.0.2", "50051"]],
    ]

    @Test("the four types arrive and each response is ACKed with its version_info and nonce")
    func ackEveryResponse() async throws {
        let plane = try await ControlPlaneProcess.launch()
        defer { plane.process.stop() }
        try plane.command(Self.basic)
        let client = Self.client(plane)
        await client.start()
        defer { Task { await client.stop() } }
        await Self.subscribeAll(client)
        try await Self.waitUntil { await client.entry(.endpoints, "c1-eds")?.resource != nil }
        for (type, name) in Self.names { #expect(await client.entry(type, name)?.resource != nil) }
        // Every response sent was answered by a request carrying its version and nonce, no error.
        try await Self.waitUntil { (try? Self.unacked(plane).isEmpty) == true }
        #expect(try Set(plane.sent().map { $0[0] }) == Set(XDSResourceType.allCases.map(\.typeURL)))
        let requests = try plane.requests()
        #expect(requests.first?["node_id"] as? String == "xds-live-test")
        #expect(requests.allSatisfy { $0["error_detail"] is NSNull })
    }

    @Test("an unsupported cluster is NACKed with error_detail, and the last good one is kept")
    func nackKeepsLastGood() async throws {
        let plane = try await ControlPlaneProcess.launch()
        defer { plane.process.stop() }
        try plane.command(Self.basic)
        let client = Self.client(plane)
        await client.start()
        defer { Task { await client.stop() } }
        await Self.subscribeAll(client)
        try await Self.waitUntil { await client.entry(.cluster, "c1")?.resource != nil }
        let goodVersion = try #require(await client.ackedVersion(.cluster))
        let good = await client.entry(.cluster, "c1")?.resource
        try plane.command(["op": "ring_hash_cluster", "cluster": "c1", "eds": "c1-eds"])
        try await Self.waitUntil {
            (try? plane.requests().contains { $0["error_detail"] is [String: Any] }) == true
        }
        let nack = try #require(try plane.requests().first { $0["error_detail"] is [String: Any] })
        let detail = try #require(nack["error_detail"] as? [String: Any])
        #expect(nack["type_url"] as? String == XDSResourceType.cluster.typeURL)
        // The NACK names the version still in use and the nonce of the response refused.
        #expect(nack["version_info"] as? String == goodVersion)
        let refused = try plane.sent().last { $0[0] == XDSResourceType.cluster.typeURL }
        #expect(nack["response_nonce"] as? String == refused?[2])
        #expect((detail["message"] as? String ?? "").contains("lb_policy"))
        #expect(detail["code"] as? Int == 3)
        let entry = await client.entry(.cluster, "c1")
        #expect(entry?.resource == good)
        #expect(entry?.nackReason != nil)
        // A good update afterwards is ACKed again.
        // (Waiting for "nothing unACKed" alone could end before the control plane sent the update.)
        try plane.command(["op": "cluster", "cluster": "c1", "eds": "c1-eds"])
        try await Self.waitUntil { await client.entry(.cluster, "c1")?.nackReason == nil }
        try await Self.waitUntil { (try? Self.unacked(plane, allowingNacks: true).isEmpty) == true }
    }

    @Test("unsubscribing sends the type's names without the one dropped, and forgets it")
    func unsubscribe() async throws {
        let plane = try await ControlPlaneProcess.launch()
        defer { plane.process.stop() }
        try plane.command(Self.basic)
        let client = Self.client(plane)
        await client.start()
        defer { Task { await client.stop() } }
        await Self.subscribeAll(client)
        await client.subscribe(.endpoints, "other-eds")
        try await Self.waitUntil { await client.entry(.endpoints, "c1-eds")?.resource != nil }
        await client.unsubscribe(.endpoints, "c1-eds")
        try await Self.waitUntil {
            (try? plane.requests().last { $0["type_url"] as? String == XDSResourceType.endpoints.typeURL })
                .flatMap { $0?["resource_names"] as? [String] } == ["other-eds"]
        }
        #expect(await client.entry(.endpoints, "c1-eds") == nil)
    }

    @Test("control plane killed: the cache stays; restarted: a new stream asks again with the versions it had")
    func reconnect() async throws {
        let plane = try await ControlPlaneProcess.launch()
        try plane.command(Self.basic)
        let client = Self.client(plane)
        await client.start()
        defer { Task { await client.stop() } }
        await Self.subscribeAll(client)
        try await Self.waitUntil { (try? Self.unacked(plane).isEmpty) == true }
        try await Self.waitUntil { await client.entry(.endpoints, "c1-eds")?.resource != nil }
        let listenerVersion = await client.ackedVersion(.listener)
        plane.process.kill()
        try await Self.waitUntil { await client.lastStreamFailure != nil }
        for (type, name) in Self.names { #expect(await client.entry(type, name)?.resource != nil) }
        let again = try await ControlPlaneProcess.launch(port: plane.port)
        defer { again.process.stop() }
        try await Self.waitUntil { await client.streamsStarted >= 2 }
        try await Self.waitUntil {
            (try? again.requests().contains { $0["type_url"] as? String == XDSResourceType.listener.typeURL }) == true
        }
        let first = try #require(try again.requests().first)
        #expect(first["node_id"] as? String == "xds-live-test")
        let listenerRequest = try #require(
            try again.requests().first { $0["type_url"] as? String == XDSResourceType.listener.typeURL }
        )
        #expect(listenerRequest["version_info"] as? String == listenerVersion)
        #expect(listenerRequest["response_nonce"] as? String == "")
        try again.command(Self.basic)
        try await Self.waitUntil { (try? Self.unacked(again).isEmpty) == true && (try? again.sent().isEmpty) == false }
    }

    @Test("an endpoints resource never sent is reported as not existing when its timer runs out")
    func doesNotExist() async throws {
        let plane = try await ControlPlaneProcess.launch()
        defer { plane.process.stop() }
        try plane.command(Self.basic)
        let client = Self.client(plane, doesNotExistTimeout: .milliseconds(500))
        await client.start()
        defer { Task { await client.stop() } }
        await client.subscribe(.endpoints, "c1-eds")
        await client.subscribe(.endpoints, "never")
        try await Self.waitUntil { await client.entry(.endpoints, "c1-eds")?.resource != nil }
        // Pending (no entry) until the timer runs out; then known not to exist.
        try await Self.waitUntil { await client.entry(.endpoints, "never") != nil }
        let entry = await client.entry(.endpoints, "never")
        #expect(entry?.resource == nil)
        #expect(await client.entry(.endpoints, "c1-eds")?.resource != nil)
    }

    // MARK: - Support

    static let names: [(XDSResourceType, String)] = [
        (.listener, "svc"), (.routeConfiguration, "svc-routes"), (.cluster, "c1"), (.endpoints, "c1-eds"),
    ]

    static func client(
        _ plane: ControlPlaneProcess,
        doesNotExistTimeout: Duration = .seconds(15),
        limits: HTTP2StreamLimits = XDSADSClient.Settings.defaultLimits
    ) -> XDSADSClient {
        var backoff = XDSADSBackoff()
        backoff.initial = .milliseconds(100)
        backoff.maximum = .milliseconds(500)
        return XDSADSClient(
            settings: XDSADSClient.Settings(
                server: HostAndPort(host: "127.0.0.1", port: plane.port),
                node: XDSNode(id: "xds-live-test").envoyNode,
                ignoresResourceDeletion: false,
                doesNotExistTimeout: doesNotExistTimeout,
                backoff: backoff,
                limits: limits
            )
        )
    }

    static func subscribeAll(_ client: XDSADSClient) async {
        for (type, name) in names { await client.subscribe(type, name) }
    }

    /// The responses sent that no request has ACKed (its version and nonce, no error_detail).
    static func unacked(_ plane: ControlPlaneProcess, allowingNacks: Bool = false) throws -> [[String]] {
        let requests = try plane.requests()
        return try plane.sent().filter { sent in
            !requests.contains { request in
                request["type_url"] as? String == sent[0] && request["response_nonce"] as? String == sent[2]
                    && (request["version_info"] as? String == sent[1]) && request["error_detail"] is NSNull
            } && !(allowingNacks && requests.contains { $0["response_nonce"] as? String == sent[2] })
        }
    }

    /// Waits, bounded at 60 s (peers are slow on a loaded machine), for `condition`.
    static func waitUntil(_ condition: () async -> Bool) async throws {
        for _ in 0..<6000 {
            if await condition() { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw PeerError("timed out waiting for a condition")
    }
}
