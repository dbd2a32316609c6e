import AuthRPC
import AuthSampleService
import Foundation
import TestSupport
import Testing

@testable import AuthRPCXDS

/// Per-call routing on an `xds:///` channel (gRFC A28, A31) and updates the control plane pushes,
/// against the test control plane and grpcio backends: the same scenarios grpcio runs as the
/// reference client in Tests/Peers/test_xds_control_plane.py.
extension XDSChannelTests {
    @Test(
        "weighted clusters 75/25: 2,000 calls split within 5 points, each run once; a cluster the routes stop naming is closed and unsubscribed"
    )
    func weightedClusters() async throws {
        let plane = try await ControlPlaneProcess.launch()
        defer { plane.process.stop() }
        let (backends, port) = try await Self.backends(["wa": "127.0.0.2", "wb": "127.0.0.3", "wc": "127.0.0.4"])
        defer { for backend in backends { backend.process.stop() } }
        try plane.command([
            "op": "routes", "listener": "weighted", "route": "weighted-routes",
            "routes": [["weighted": [["weighted-a", "75"], ["weighted-b", "25"]]]] as [[String: any Sendable]],
            "clusters": [
                "weighted-a": Self.locality(["127.0.0.2"], port: port),
                "weighted-b": Self.locality(["127.0.0.3"], port: port),
            ],
        ])
        XDSScheme.register(bootstrap: try Self.bootstrap(plane))
        let channel = try Channel(target: "xds:///weighted", transportSecurity: .plaintext)
        defer { channel.close() }
        var counts: [String: Int] = [:]
        try await withThrowingTaskGroup(of: [String].self) { group in
            for worker in 0..<10 {
                group.addTask {
                    var served: [String] = []
                    for index in 0..<200 {
                        served.append(try await Self.call(channel, id: "weighted-\(worker)-\(index)"))
                    }
                    return served
                }
            }
            for try await served in group {
                for name in served { counts[name, default: 0] += 1 }
            }
        }
        #expect(counts.values.reduce(0, +) == 2000)
        #expect(abs(Double(counts["wa", default: 0]) / 2000 - 0.75) <= 0.05, "\(counts)")
        #expect(abs(Double(counts["wb", default: 0]) / 2000 - 0.25) <= 0.05, "\(counts)")
        // Every call ran once, on the backend that answered it.
        #expect(backends[0].ranIDs.count + backends[1].ranIDs.count == 2000)
        #expect(channel.routedGroupNames == ["weighted-b"])

        // weighted-b gives way to weighted-c: once a call reaches c, b's connections are gone.
        try plane.command([
            "op": "routes", "listener": "weighted", "route": "weighted-routes",
            "routes": [["weighted": [["weighted-a", "50"], ["weighted-c", "50"]]]] as [[String: any Sendable]],
            "clusters": [
                "weighted-a": Self.locality(["127.0.0.2"], port: port),
                "weighted-c": Self.locality(["127.0.0.4"], port: port),
            ],
        ])
        var reachedC = false
        for index in 0..<1000 where !reachedC {
            reachedC = try await Self.call(channel, id: "weighted-moved-\(index)") == "wc"
        }
        #expect(reachedC)
        #expect(channel.routedGroupNames == ["weighted-c"])
        // ... and the client no longer asks for weighted-b or its endpoints.
        func lastNames(_ type: XDSResourceType) throws -> Set<String>? {
            try plane.requests().last { $0["type_url"] as? String == type.typeURL }
                .flatMap { $0["resource_names"] as? [String] }.map(Set.init)
        }
        let unsubscribed: Void? = try? await XDSADSClientTests.waitUntil {
            (try? lastNames(.cluster)) == ["weighted-a", "weighted-c"]
                && (try? lastNames(.endpoints)) == ["weighted-a-eds", "weighted-c-eds"]
        }
        let asked = "\(String(describing: try lastNames(.cluster))), \(String(describing: try lastNames(.endpoints)))"
        #expect(unsubscribed != nil, "the client still asks for \(asked)")
    }

    @Test("header routing: x-track: canary goes to the canary cluster, anything else (Canary too) to stable")
    func headerRouting() async throws {
        let plane = try await ControlPlaneProcess.launch()
        defer { plane.process.stop() }
        let (backends, port) = try await Self.backends(["canary": "127.0.0.3", "stable": "127.0.0.2"])
        defer { for backend in backends { backend.process.stop() } }
        try plane.command([
            "op": "routes", "listener": "headers", "route": "headers-routes",
            "routes": [
                ["cluster": "headers-canary", "headers": [["x-track", "canary"]]],
                ["cluster": "headers-stable"],
            ] as [[String: any Sendable]],
            "clusters": [
                "headers-canary": Self.locality(["127.0.0.3"], port: port),
                "headers-stable": Self.locality(["127.0.0.2"], port: port),
            ],
        ])
        XDSScheme.register(bootstrap: try Self.bootstrap(plane))
        let channel = try Channel(target: "xds:///headers", transportSecurity: .plaintext)
        defer { channel.close() }
        func served(_ track: String?) async throws -> Set<String> {
            var names: Set<String> = []
            for index in 0..<20 {
                names.insert(try await Self.call(channel, id: "headers-\(index)", track: track))
            }
            return names
        }
        #expect(try await served(nil) == ["stable"])
        #expect(try await served("canary") == ["canary"])
        #expect(try await served("Canary") == ["stable"])
    }

    @Test("a route's max_stream_duration caps the call's deadline (gRFC A31)")
    func maxStreamDuration() async throws {
        let plane = try await ControlPlaneProcess.launch()
        defer { plane.process.stop() }
        let (backends, port) = try await Self.backends(["slow": "127.0.0.2"])
        defer { for backend in backends { backend.process.stop() } }
        try plane.command([
            "op": "routes", "listener": "capped", "route": "capped-routes",
            // Capped only for calls with x-track: capped, so the first call (which waits for the
            // config and a connection) is not.
            "routes": [
                ["cluster": "capped-c", "headers": [["x-track", "capped"]], "max_stream_duration": 2],
                ["cluster": "capped-c"],
            ] as [[String: any Sendable]],
            "clusters": ["capped-c": Self.locality(["127.0.0.2"], port: port)],
        ])
        XDSScheme.register(bootstrap: try Self.bootstrap(plane))
        let channel = try Channel(target: "xds:///capped", transportSecurity: .plaintext)
        defer { channel.close() }
        #expect(try await Self.call(channel, id: "uncapped") == "slow")
        #expect(try await Self.call(channel, id: "capped-fast", track: "capped") == "slow")
        // The backend takes 5 s; the call asks for 20; the route allows 2 (grpcio 1.85 fails every
        // call at once when the route allows exactly 1 s; Tests/Peers/test_xds_control_plane.py).
        let started = ContinuousClock.now
        await #expect {
            _ = try await Self.call(channel, id: "capped-slow", track: "capped", delayMilliseconds: 5_000)
        } throws: { error in
            (error as? RPCError)?.code == .deadlineExceeded
        }
        #expect(ContinuousClock.now - started < .seconds(4.5))
    }

    @Test(
        "endpoints the control plane adds and removes reach the channel at once (no 30 s re-resolution), and no call fails meanwhile"
    )
    func pushedEndpoints() async throws {
        let plane = try await ControlPlaneProcess.launch()
        defer { plane.process.stop() }
        let (backends, port) = try await Self.backends(["p1": "127.0.0.2", "p2": "127.0.0.3"])
        defer { for backend in backends { backend.process.stop() } }
        func serve(_ hosts: [String]) throws {
            try plane.command([
                "op": "basic", "listener": "pushed", "route": "pushed-routes", "cluster": "pushed-c",
                "eds": "pushed-eds", "backends": hosts.map { [$0, String(port)] },
            ])
        }
        try serve(["127.0.0.2"])
        XDSScheme.register(bootstrap: try Self.bootstrap(plane))
        let channel = try Channel(target: "xds:///pushed", transportSecurity: .plaintext)
        defer { channel.close() }
        var calls = 0
        /// Calls until `done` holds for the set of backends of the last 10 calls (at most 1,000).
        func callUntil(_ done: (Set<String>) -> Bool) async throws -> Bool {
            var recent: [String] = []
            for _ in 0..<1000 {
                calls += 1
                recent.append(try await Self.call(channel, id: "pushed-\(calls)"))
                if recent.count > 10 { recent.removeFirst() }
                if recent.count == 10, done(Set(recent)) { return true }
            }
            return false
        }
        #expect(try await callUntil { $0 == ["p1"] })
        try serve(["127.0.0.2", "127.0.0.3"])
        #expect(try await callUntil { $0 == ["p1", "p2"] })
        try serve(["127.0.0.3"])
        #expect(try await callUntil { $0 == ["p2"] })
        // Every call succeeded (a failure throws) and ran exactly once.
        let ran = backends[0].ranIDs + backends[1].ranIDs
        #expect(ran.count == calls)
        #expect(Set(ran).count == calls)
    }

    @Test(
        "priority failover and back: priority 0's endpoint turns UNHEALTHY, calls go to priority 1; healthy again, they come back"
    )
    func priorityFailover() async throws {
        let plane = try await ControlPlaneProcess.launch()
        defer { plane.process.stop() }
        let (backends, port) = try await Self.backends(["primary": "127.0.0.2", "standby": "127.0.0.3"])
        defer { for backend in backends { backend.process.stop() } }
        func serve(primaryHealth: String) throws {
            let priorities: [[any Sendable]] = [
                [0, 1, "a", [["127.0.0.2", String(port), primaryHealth]]],
                [1, 1, "b", [["127.0.0.3", String(port)]]],
            ]
            try plane.command([
                "op": "routes", "listener": "failover", "route": "failover-routes",
                "routes": [["cluster": "failover-c"]] as [[String: any Sendable]],
                "clusters": ["failover-c": priorities],
            ])
        }
        try serve(primaryHealth: "HEALTHY")
        XDSScheme.register(bootstrap: try Self.bootstrap(plane))
        let channel = try Channel(target: "xds:///failover", transportSecurity: .plaintext)
        defer { channel.close() }
        var calls = 0
        /// Whether calls reach `name` within 1,000 calls, then 10 in a row do.
        func eventually(_ name: String) async throws -> Bool {
            for _ in 0..<1000 {
                calls += 1
                if try await Self.call(channel, id: "failover-\(calls)") == name { break }
            }
            var last: Set<String> = []
            for _ in 0..<10 {
                calls += 1
                last.insert(try await Self.call(channel, id: "failover-\(calls)"))
            }
            return last == [name]
        }
        #expect(try await eventually("primary"))
        try serve(primaryHealth: "UNHEALTHY")
        #expect(try await eventually("standby"))
        try serve(primaryHealth: "HEALTHY")
        #expect(try await eventually("primary"))
    }

    /// A cluster's localities for the control plane's `routes` command: one (priority 0,
    /// weight 1) holding `hosts` on `port`.
    static func locality(_ hosts: [String], port: Int) -> [[any Sendable]] {
        let backends: [[String]] = hosts.map { [$0, String(port)] }
        return [[0, 1, "a", backends]]
    }
}
