import AuthRPC
import AuthSampleService
import Foundation
import TestSupport
import Testing

@testable import AuthRPCXDS

/// A cluster balanced as gRFC A27's tree on an `xds:///` channel, against the test control plane
/// and grpcio backends: localities picked by weight, and priorities failed over by connectivity
/// (the endpoints' health says nothing). grpcio runs the same scenarios as the reference client
/// in Tests/Peers/test_xds_control_plane.py.
extension XDSChannelTests {
    @Test("locality weights 3:1 in one priority: 2,000 calls split within 5 points")
    func localityWeights() async throws {
        let plane = try await ControlPlaneProcess.launch()
        defer { plane.process.stop() }
        let (backends, port) = try await Self.backends(["heavy": "127.0.0.2", "light": "127.0.0.3"])
        defer { for backend in backends { backend.process.stop() } }
        try plane.command([
            "op": "routes", "listener": "localities", "route": "localities-routes",
            "routes": [["cluster": "localities-c"]] as [[String: any Sendable]],
            "clusters": [
                "localities-c": [
                    [0, 3, "heavy", [["127.0.0.2", String(port)]]],
                    [0, 1, "light", [["127.0.0.3", String(port)]]],
                ] as [[any Sendable]]
            ],
        ])
        XDSScheme.register(bootstrap: try Self.bootstrap(plane))
        let channel = try Channel(target: "xds:///localities", transportSecurity: .plaintext)
        defer { channel.close() }
        var counts: [String: Int] = [:]
        for index in 0..<2000 {
            counts[try await Self.call(channel, id: "localities-\(index)"), default: 0] += 1
        }
        #expect(abs(Double(counts["heavy", default: 0]) / 2000 - 0.75) <= 0.05, "\(counts)")
        #expect(abs(Double(counts["light", default: 0]) / 2000 - 0.25) <= 0.05, "\(counts)")
    }

    @Test(
        "failover by connectivity: priority 0 is HEALTHY but unreachable, calls go to priority 1; once it answers they come back"
    )
    func connectivityFailover() async throws {
        let plane = try await ControlPlaneProcess.launch()
        defer { plane.process.stop() }
        // Nothing listens on 127.0.0.4 at first: priority 0's only endpoint refuses connections.
        let (backends, port) = try await Self.backends(["standby": "127.0.0.3"])
        defer { for backend in backends { backend.process.stop() } }
        try plane.command([
            "op": "routes", "listener": "connectivity", "route": "connectivity-routes",
            "routes": [["cluster": "connectivity-c"]] as [[String: any Sendable]],
            "clusters": [
                "connectivity-c": [
                    [0, 1, "a", [["127.0.0.4", String(port), "HEALTHY"]]],
                    [1, 1, "b", [["127.0.0.3", String(port)]]],
                ] as [[any Sendable]]
            ],
        ])
        XDSScheme.register(bootstrap: try Self.bootstrap(plane))
        let channel = try Channel(target: "xds:///connectivity", transportSecurity: .plaintext)
        defer { channel.close() }
        // Every call succeeds, on priority 1, although priority 0 never connected.
        for index in 0..<20 {
            #expect(try await Self.call(channel, id: "connectivity-\(index)") == "standby")
        }

        let primary = try await Peers.launchBackend(listen: "127.0.0.4:\(port)", name: "primary")
        defer { primary.process.stop() }
        // Priority 0 is tried again after its backoff (at most a few seconds here); from then on
        // it serves. Bounded by the calls' count and a minute, never by a sleep.
        let started = ContinuousClock.now
        var calls = 0
        var reached = false
        while !reached, ContinuousClock.now - started < .seconds(60) {
            calls += 1
            reached = try await Self.call(channel, id: "connectivity-back-\(calls)") == "primary"
        }
        #expect(reached, "priority 0 never served again after \(calls) calls")
        var last: Set<String> = []
        for index in 0..<10 { last.insert(try await Self.call(channel, id: "connectivity-after-\(index)")) }
        #expect(last == ["primary"])
    }
}
