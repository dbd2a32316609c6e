import AuthRPC
import Foundation
import TestSupport
import Testing

/// A service name as a cluster's DNS would serve it, resolving to backends on 127.0.0.1-3 through
/// a hosts file of the test's own, which the client (ChannelProbe) sees in a mount namespace.
/// The backends count the calls they run; that is the evidence.
@Suite(
    "Name resolution: a production-shaped name, looked up again as it changes",
    .enabled(if: ProbeProcess.canUseNamespaces, "needs root for a mount namespace"),
    .serialized
)
struct NameResolutionTests {
    static let name = "backend.default.svc.cluster.local"

    private func probe(
        _ hosts: HostsFile,
        port: Int,
        policy: String,
        resolutionIntervalMillis: Int? = nil
    ) async throws -> ProbeProcess {
        var arguments = ["--target", "dns:///\(Self.name):\(port)", "--policy", policy]
        if let resolutionIntervalMillis { arguments += ["--resolution-interval-ms", String(resolutionIntervalMillis)] }
        let probe = try ProbeProcess(hostsFile: hosts.url, arguments: arguments)
        let ready = try await probe.nextLine()
        guard ready == "READY" else { throw PeerError("ChannelProbe: \(ready)") }
        return probe
    }

    private static func ran(_ backend: BackendInfo, _ prefix: String) -> Int {
        backend.ranIDs.filter { $0.hasPrefix(prefix + "-") }.count
    }

    @Test("round-robin over a name with three addresses spreads the calls over the three backends")
    func roundRobinOverAName() async throws {
        let backends = try await Backends.launch(count: 3)
        defer { backends.stop() }
        let hosts = try HostsFile()
        defer { hosts.remove() }
        try hosts.write([("127.0.0.1", Self.name), ("127.0.0.2", Self.name), ("127.0.0.3", Self.name)])
        let probe = try await probe(hosts, port: backends.port, policy: "round_robin")
        defer { probe.stop() }
        let tally = try await probe.calls("rr", count: 300, concurrency: 30)
        #expect(tally.ok == 300, "\(tally)")
        for backend in backends.running {
            #expect(Self.ran(backend, "rr") >= 50, "\(backend.name) ran \(Self.ran(backend, "rr")) of 300")
        }
        let counts = backends.ranCounts
        #expect(counts.count == 300 && counts.values.allSatisfy { $0 == 1 })
    }

    @Test("pick-first follows the name to a new address within the re-resolution interval (shortened to 200 ms)")
    func pickFirstFollowsTheName() async throws {
        let backends = try await Backends.launch(count: 3)
        defer { backends.stop() }
        let hosts = try HostsFile()
        defer { hosts.remove() }
        try hosts.write([("127.0.0.2", Self.name)])
        let probe = try await probe(hosts, port: backends.port, policy: "pick_first", resolutionIntervalMillis: 200)
        defer { probe.stop() }
        #expect(try await probe.calls("before", count: 10).servers == ["b2": 10])

        try hosts.write([("127.0.0.3", Self.name)])
        var batch = 0
        try await eventually("the calls move to 127.0.0.3") {
            batch += 1
            return try await probe.calls("moving\(batch)", count: 5).servers == ["b3": 5]
        }
        let after = try await probe.calls("after", count: 20)
        #expect(after.ok == 20, "\(after)")
        #expect(Self.ran(backends.running[2], "after") == 20)
        #expect(Self.ran(backends.running[1], "after") == 0)
        #expect(backends.running[0].ranIDs.isEmpty)
    }

    @Test("on reconnect the name is looked up again, without waiting for the 30 s interval")
    func lookedUpAgainOnReconnect() async throws {
        let backends = try await Backends.launch(count: 2)
        defer { backends.stop() }
        let hosts = try HostsFile()
        defer { hosts.remove() }
        try hosts.write([("127.0.0.1", Self.name)])
        let probe = try await probe(hosts, port: backends.port, policy: "pick_first")
        defer { probe.stop() }
        #expect(try await probe.calls("first", count: 10).servers == ["b1": 10])
        try hosts.write([("127.0.0.2", Self.name)])
        // The connection lasts, and the 30 s interval is far: the channel stays where it is.
        #expect(try await probe.calls("kept", count: 10).servers == ["b1": 10])

        backends.kill(0)
        try await eventually("the probe sees the connection end") { try await probe.send("state") == "STATE IDLE" }
        let moved = try await probe.calls("moved", count: 10)
        #expect(moved.ok == 10, "\(moved)")
        #expect(Self.ran(backends.running[1], "moved") == 10)
    }

    @Test("round-robin takes a new address into the rotation and leaves a removed one (interval shortened to 200 ms)")
    func roundRobinFollowsTheList() async throws {
        let backends = try await Backends.launch(count: 3)
        defer { backends.stop() }
        let hosts = try HostsFile()
        defer { hosts.remove() }
        try hosts.write([("127.0.0.1", Self.name), ("127.0.0.2", Self.name)])
        let probe = try await probe(hosts, port: backends.port, policy: "round_robin", resolutionIntervalMillis: 200)
        defer { probe.stop() }
        // Both addresses take calls once both connections are up (on a busy machine the first
        // batches may all find only one ready); the third, not in the list, never does.
        var batch = 0
        try await eventually("127.0.0.1 and 127.0.0.2 both take calls") {
            batch += 1
            let two = try await probe.calls("two\(batch)", count: 30, concurrency: 6)
            #expect(two.ok == 30 && two.servers["b3"] == nil, "\(two)")
            return two.servers.count == 2
        }

        try hosts.write([("127.0.0.1", Self.name), ("127.0.0.2", Self.name), ("127.0.0.3", Self.name)])
        try await eventually("127.0.0.3 joins the rotation") {
            batch += 1
            return try await probe.calls("growing\(batch)", count: 30, concurrency: 6).servers["b3", default: 0] > 0
        }
        try hosts.write([("127.0.0.1", Self.name), ("127.0.0.3", Self.name)])
        try await eventually("127.0.0.2 leaves it") {
            batch += 1
            return try await probe.calls("shrinking\(batch)", count: 30, concurrency: 6).servers["b2"] == nil
        }
        let last = try await probe.calls("last", count: 60, concurrency: 6)
        #expect(last.ok == 60, "\(last)")
        #expect(Self.ran(backends.running[1], "last") == 0)
        #expect(Self.ran(backends.running[0], "last") > 0 && Self.ran(backends.running[2], "last") > 0)
        #expect(backends.ranCounts.values.allSatisfy { $0 == 1 })
    }
}
