import AuthRPC
import AuthRPCTransport
import AuthSampleService
import Foundation
import TestSupport
import Testing

@testable import AuthRPCXDS

/// `Channel(target: "xds:///svc")` end to end: the test control plane
/// (Tests/Peers/xds_control_plane.py) sends listener -> routes -> cluster -> endpoints naming
/// grpcio backends on 127.0.0.2 and 127.0.0.3, and calls go to them.
@Suite("xds:/// channels against the test control plane and grpcio backends", .serialized)
struct XDSChannelTests {
    @Test(
        "calls on an xds:/// channel reach the cluster's backends round robin, and keep flowing on the cache when the control plane dies"
    )
    func basicRoutingAndCache() async throws {
        let plane = try await ControlPlaneProcess.launch()
        var backends: [BackendInfo] = []
        var port = 0
        for attempt in 0..<5 {
            port = Ports.closed()
            do {
                backends = [
                    try await Peers.launchBackend(listen: "127.0.0.2:\(port)", name: "b1"),
                    try await Peers.launchBackend(listen: "127.0.0.3:\(port)", name: "b2"),
                ]
                break
            } catch  where attempt < 4 {
                for backend in backends { backend.process.stop() }
                backends = []
            }
        }
        defer { for backend in backends { backend.process.stop() } }
        try plane.command([
            "op": "basic", "listener": "svc", "route": "svc-routes", "cluster": "c1", "eds": "c1-eds",
            "backends": [["127.0.0.2", String(port)], ["127.0.0.3", String(port)]],
        ])
        XDSScheme.register(bootstrap: try Self.bootstrap(plane))
        let channel = try Channel(target: "xds:///svc", transportSecurity: .plaintext)
        defer { channel.close() }
        var ran: [String: Int] = [:]
        for index in 0..<20 {
            ran[try await Self.call(channel, id: "xds-\(index)"), default: 0] += 1
        }
        // Both endpoints the control plane named served calls, round robin (the first calls may
        // all go to the one that connected first).
        #expect(ran.keys.sorted() == ["b1", "b2"])
        #expect(ran.values.allSatisfy { $0 >= 5 })
        #expect(Set(backends[0].ranIDs + backends[1].ranIDs) == Set((0..<20).map { "xds-\($0)" }))
        // The control plane saw this channel's node and got its ACKs.
        #expect(try plane.requests().first?["node_id"] as? String == "xds-channel-test")
        plane.process.kill()
        var afterKill: [String: Int] = [:]
        for index in 20..<30 {
            afterKill[try await Self.call(channel, id: "xds-\(index)"), default: 0] += 1
        }
        #expect(afterKill == ["b1": 5, "b2": 5])
    }

    @Test("a listener the control plane does not have fails calls UNAVAILABLE, naming it")
    func missingListener() async throws {
        let plane = try await ControlPlaneProcess.launch()
        defer { plane.process.stop() }
        try plane.command([
            "op": "basic", "listener": "svc", "route": "svc-routes", "cluster": "c1", "eds": "c1-eds",
            "backends": [["127.0.0.2", "1"]],
        ])
        XDSScheme.register(bootstrap: try Self.bootstrap(plane))
        let channel = try Channel(target: "xds:///nowhere", transportSecurity: .plaintext)
        defer { channel.close() }
        await #expect {
            _ = try await Self.call(channel, id: "missing")
        } throws: { error in
            (error as? RPCError)?.code == .unavailable && "\(error)".contains("no listener 'nowhere'")
        }
    }

    @Test("a bad xds target or a bootstrap the client cannot use fails the channel's creation, naming why")
    func badTargetsAndBootstraps() throws {
        let tls = try XDSBootstrap(
            json: """
                {"xds_servers": [{"server_uri": "127.0.0.1:1", "channel_creds": [{"type": "google_default"}]}]}
                """
        )
        XDSScheme.register(bootstrap: tls)
        #expect {
            _ = try Channel(target: "xds:///svc", transportSecurity: .plaintext)
        } throws: { error in
            (error as? RPCError)?.code == .invalidArgument && "\(error)".contains("channel_creds")
        }
        #expect {
            _ = try Channel(target: "xds:svc", transportSecurity: .plaintext)
        } throws: { error in
            (error as? RPCError)?.code == .invalidArgument && "\(error)".contains("xds:///NAME")
        }
    }

    static func bootstrap(_ plane: ControlPlaneProcess) throws -> XDSBootstrap {
        try XDSBootstrap(
            json: """
                {"xds_servers": [{"server_uri": "127.0.0.1:\(plane.port)", "channel_creds": [{"type": "insecure"}],
                  "server_features": ["xds_v3"]}],
                 "node": {"id": "xds-channel-test"}}
                """
        )
    }

    static func call(_ channel: Channel, id: String) async throws -> String {
        var options = CallOptions(timeout: .seconds(20))
        options.initialMetadata.addString(id, forKey: "x-call-id")
        return try await Grpc_Testing_TestServiceClient(channel: channel)
            .unaryCall(Grpc_Testing_SimpleRequest(), options: options).message.username
    }
}
