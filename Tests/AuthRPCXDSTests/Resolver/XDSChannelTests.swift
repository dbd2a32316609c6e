import AuthRPC
import AuthRPCTransport
import AuthSampleService
import Foundation
import GoogleAuth
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
        let (backends, port) = try await Self.backends(["b1": "127.0.0.2", "b2": "127.0.0.3"])
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
        // The control plane's answers leave the listener out; its timer (1 s here) says it does
        // not exist.
        XDSScheme.register(bootstrap: try Self.bootstrap(plane)) { $0.doesNotExistTimeout = .seconds(1) }
        let channel = try Channel(target: "xds:///nowhere", transportSecurity: .plaintext)
        defer { channel.close() }
        await #expect {
            _ = try await Self.call(channel, id: "missing")
        } throws: { error in
            (error as? RPCError)?.code == .unavailable && "\(error)".contains("no listener 'nowhere'")
        }
    }

    @Test(
        "shutdown() ends the stream to the control plane and waits for its connection: the control plane sees it end, nothing of the channel stays open, and a later call fails UNAVAILABLE"
    )
    func shutdownEndsTheControlPlaneStream() async throws {
        let (plane, backend, channel) = try await Self.servingOneBackend("down")
        defer { plane.process.stop() }
        defer { backend.process.stop() }
        #expect(try await Self.call(channel, id: "down-1") == "down-1")
        #expect(try plane.streams().open == 1)
        #expect(channel.openConnectionCount == 2)  // the backend's and the control plane's

        await channel.shutdown()
        // Its thread has ended when shutdown() returns, so a program may exit at once.
        #expect(channel.openConnectionCount == 0)
        let streams = try plane.streams(untilOpen: 0)
        #expect(streams.open == 0 && streams.ended == 1)
        await #expect {
            _ = try await Self.call(channel, id: "down-2")
        } throws: { error in
            (error as? RPCError)?.code == .unavailable
        }
        await channel.shutdown()  // again: returns at once
        #expect(try plane.streams().ended == 1)  // and no stream was started again
    }

    @Test("shutdown() returns while the control plane is down and the client waits to connect again")
    func shutdownWhileTheControlPlaneIsDown() async throws {
        let (plane, backend, channel) = try await Self.servingOneBackend("gone")
        defer { backend.process.stop() }
        #expect(try await Self.call(channel, id: "gone-1") == "gone-1")
        plane.process.kill()
        await channel.shutdown()
        #expect(channel.openConnectionCount == 0)
    }

    @Test("a bad xds target or a bootstrap the client cannot use fails the channel's creation, naming why")
    func badTargetsAndBootstraps() throws {
        let tls = try XDSBootstrap(
            json: """
                {"xds_servers": [{"server_uri": "127.0.0.1:1", "channel_creds": [{"type": "google_default"}]}]}
                """
        )
        // google_default with no Application Default Credentials anywhere: the creation fails,
        // naming the credentials and where it looked.
        XDSScheme.register(
            bootstrap: tls,
            environment: .init(variables: ["HOME": "/nonexistent"], productNamePath: "/nonexistent"),
            tuning: { _ in }
        )
        #expect {
            _ = try Channel(target: "xds:///svc", transportSecurity: .plaintext)
        } throws: { error in
            (error as? RPCError)?.code == .invalidArgument && "\(error)".contains("channel_creds google_default")
                && "\(error)".contains("GOOGLE_APPLICATION_CREDENTIALS")
        }
        #expect {
            _ = try Channel(target: "xds:svc", transportSecurity: .plaintext)
        } throws: { error in
            (error as? RPCError)?.code == .invalidArgument && "\(error)".contains("xds:///NAME")
        }
    }

    @Test(
        "XDSScheme.clientStatus() shows each resource ACKed with its version, then a refused update NACKed with its reason while the old version serves"
    )
    func clientStatus() async throws {
        let plane = try await ControlPlaneProcess.launch()
        defer { plane.process.stop() }
        let (backends, port) = try await Self.backends(["s1": "127.0.0.2"])
        defer { for backend in backends { backend.process.stop() } }
        try plane.command([
            "op": "basic", "listener": "status-svc", "route": "status-routes", "cluster": "status-c",
            "eds": "status-eds", "backends": [["127.0.0.2", String(port)]],
        ])
        XDSScheme.register(bootstrap: try Self.bootstrap(plane))
        let channel = try Channel(target: "xds:///status-svc", transportSecurity: .plaintext)
        defer { channel.close() }
        #expect(try await Self.call(channel, id: "status-1") == "s1")

        let acked = try #require(await XDSScheme.clientStatus().first { $0.target == "status-svc" })
        #expect(acked.server == "127.0.0.1:\(plane.port)")
        #expect(acked.streamsStarted == 1)
        #expect(acked.lastStreamFailure == nil)
        #expect(acked.resources.map(\.name) == ["status-svc", "status-routes", "status-c", "status-eds"])
        #expect(acked.resources.map(\.typeURL) == XDSResourceType.allCases.map(\.typeURL))
        #expect(acked.resources.allSatisfy { $0.state == .acked && !$0.version.isEmpty && $0.nackReason == nil })
        let clusterVersion = acked.resources[2].version

        // A RING_HASH cluster: the client refuses it and keeps the ROUND_ROBIN one it had.
        try plane.command(["op": "ring_hash_cluster", "cluster": "status-c", "eds": "status-eds"])
        // Polled until the NACK shows (at most 10 s): the update reaches the client on its own.
        var nacked: XDSResourceStatus?
        for _ in 0..<500 where nacked == nil {
            let status = await XDSScheme.clientStatus().first { $0.target == "status-svc" }
            nacked = status?.resources.first { $0.name == "status-c" && $0.state == .nacked }
            if nacked == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        let refused = try #require(nacked)
        #expect(refused.version == clusterVersion)
        #expect(refused.nackReason?.contains("lb_policy") == true)
        #expect(try await Self.call(channel, id: "status-2") == "s1")
    }

    @Test(
        "auth_sample call --target xds:///NAME reaches the cluster's backend, and --xds-status prints what the client holds, after a success and after a failure"
    )
    func authSampleCall() async throws {
        let plane = try await ControlPlaneProcess.launch()
        defer { plane.process.stop() }
        let (backends, port) = try await Self.backends(["cli-backend": "127.0.0.2"])
        defer { for backend in backends { backend.process.stop() } }
        try plane.command([
            "op": "basic", "listener": "cli-svc", "route": "cli-routes", "cluster": "cli-c", "eds": "cli-eds",
            "backends": [["127.0.0.2", String(port)]],
        ])
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("xds-cli-\(UUID())")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        let bootstrap =
            #"{"xds_servers": [{"server_uri": "127.0.0.1:PORT", "channel_creds": [{"type": "insecure"}]}], "node": {"id": "auth-sample-cli"}}"#
        let environment = [
            "PATH": "/usr/bin:/bin", "HOME": home.path, "XDG_CONFIG_HOME": home.path,
            "GRPC_XDS_BOOTSTRAP_CONFIG": bootstrap.replacingOccurrences(of: "PORT", with: String(plane.port)),
        ]
        func run(_ arguments: [String]) async throws -> (code: Int32?, stdout: String, stderr: String) {
            let capture = try await ChildProcess.capture(
                PackageRoot.builtProduct("auth_sample"),
                ["call", "--plaintext", "--anonymous", "--xds-status"] + arguments,
                environment: environment,
                timeout: .seconds(60)
            )
            return (
                capture.exit?.code, String(decoding: capture.stdout, as: UTF8.self),
                String(decoding: capture.stderr, as: UTF8.self)
            )
        }

        let text = try await run(["--target", "xds:///cli-svc"])
        #expect(text.code == 0, "\(text)")
        #expect(text.stdout.contains("on behalf of user cli-backend"), "\(text)")
        let heading = "xDS client for xds:///cli-svc (control plane 127.0.0.1:\(plane.port), 1 ADS stream started):"
        #expect(text.stdout.contains(heading), "\(text)")
        for line in [
            "listener cli-svc: acked, version", "route configuration cli-routes: acked, version",
            "cluster cli-c: acked, version", "endpoints cli-eds: acked, version",
        ] {
            #expect(text.stdout.contains(line), "\(text)")
        }

        let json = try await run(["--target", "xds:///cli-svc", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let xds = try #require((object?["xds"] as? [[String: Any]])?.first, "\(json)")
        #expect(xds["target"] as? String == "cli-svc")
        let states = (xds["resources"] as? [[String: Any]])?.compactMap { $0["state"] as? String }
        #expect(states == ["acked", "acked", "acked", "acked"])

        // A listener the control plane does not have: the call fails, and the status says why.
        let missing = try await run(["--target", "xds:///nowhere"])
        #expect(missing.code != 0)
        #expect(missing.stderr.contains("listener nowhere: does not exist"), "\(missing)")
    }

    /// grpcio backends named by their keys, on the addresses their values give, all on one port.
    static func backends(_ addresses: [String: String]) async throws -> ([BackendInfo], port: Int) {
        var backends: [BackendInfo] = []
        for attempt in 0..<5 {
            let port = Ports.closed()
            do {
                for (name, host) in addresses.sorted(by: { $0.key < $1.key }) {
                    backends.append(try await Peers.launchBackend(listen: "\(host):\(port)", name: name))
                }
                return (backends, port)
            } catch  where attempt < 4 {
                for backend in backends { backend.process.stop() }
                backends = []
            }
        }
        throw RPCError(code: .unavailable, message: "no free port for the backends")
    }

    /// A control plane whose listener `<name>-svc` leads (`<name>-routes`, cluster `<name>-c`,
    /// `<name>-eds`) to one grpcio backend, `<name>-1` on 127.0.0.2, registered as the `xds`
    /// scheme's; and a plaintext channel to `xds:///<name>-svc`.
    static func servingOneBackend(
        _ name: String
    ) async throws -> (plane: ControlPlaneProcess, backend: BackendInfo, channel: Channel) {
        let plane = try await ControlPlaneProcess.launch()
        let backend: BackendInfo
        let port: Int
        do {
            let (backends, backendPort) = try await backends(["\(name)-1": "127.0.0.2"])
            (backend, port) = (backends[0], backendPort)
        } catch {
            plane.process.stop()
            throw error
        }
        do {
            try plane.command([
                "op": "basic", "listener": "\(name)-svc", "route": "\(name)-routes", "cluster": "\(name)-c",
                "eds": "\(name)-eds", "backends": [["127.0.0.2", String(port)]],
            ])
            XDSScheme.register(bootstrap: try bootstrap(plane))
            let channel = try Channel(target: "xds:///\(name)-svc", transportSecurity: .plaintext)
            return (plane, backend, channel)
        } catch {
            backend.process.stop()
            plane.process.stop()
            throw error
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

    static func call(
        _ channel: Channel,
        id: String,
        track: String? = nil,
        delayMilliseconds: Int? = nil
    ) async throws -> String {
        var options = CallOptions(timeout: .seconds(20))
        options.initialMetadata.addString(id, forKey: "x-call-id")
        if let track { options.initialMetadata.addString(track, forKey: "x-track") }
        if let delayMilliseconds { options.initialMetadata.addString(String(delayMilliseconds), forKey: "x-delay-ms") }
        return try await Grpc_Testing_TestServiceClient(channel: channel)
            .unaryCall(Grpc_Testing_SimpleRequest(), options: options).message.username
    }
}
