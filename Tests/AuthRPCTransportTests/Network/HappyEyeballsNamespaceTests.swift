import Foundation
import TestSupport
import Testing

/// Happy Eyeballs against addresses that really swallow SYNs, in network namespaces the test
/// makes (``BlackholeNetwork``): the client (ConnectProbe, run inside the namespace) reaches
/// the fault server on the one working address in about a quarter of a second, where trying the
/// addresses one after another would spend the whole connect timeout on the silent ones.
@Suite(
    "Happy Eyeballs v2 with SYN-dropping addresses",
    .enabled(if: BlackholeNetwork.isAvailable, "needs ip(8) and root to make network namespaces")
)
struct HappyEyeballsNamespaceTests {
    private static let probe = PackageRoot.builtProduct("ConnectProbe").path

    private func json(_ output: String) throws -> [String: Any] {
        let line = output.split(separator: "\n").last { $0.hasPrefix("{") } ?? ""
        return try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
    }

    @Test("three silent IPv6 addresses and a working IPv4 one: connected well within a 2 s connect timeout")
    func silentAddressesDoNotCostTheTimeout() async throws {
        try await BlackholeNetwork.with { network in try await run(in: network) }
    }

    private func run(in network: BlackholeNetwork) async throws {
        let faults = try await PeerProcess.launch(
            script: "Tests/Peers/h2_fault_server.py",
            name: "faults-netns",
            arguments: ["--host", BlackholeNetwork.clientIPv4],
            launcher: [BlackholeNetwork.ip!, "netns", "exec", network.client]
        )
        defer { faults.stop() }
        let port = (faults.info["ports"] as? [String: any Sendable])?["h2c"] as? Int ?? 0

        // The silent addresses are silent: alone, they time out (no refusal, no unreachable).
        let silent = try json(
            await network.run(
                Self.probe,
                ["--address", BlackholeNetwork.blackholedIPv6[0], "--port", "\(port)", "--connect-timeout-ms", "700"]
            ).stdout
        )
        #expect(silent["ok"] as? Bool == false, "\(silent)")
        #expect(silent["kind"] as? String == "timedOut", "\(silent)")

        // Given in this order, one after another with a share of 2 s each would fail; Happy
        // Eyeballs interleaves the families and starts the IPv4 attempt 250 ms after the first.
        let addresses = BlackholeNetwork.blackholedIPv6 + [BlackholeNetwork.clientIPv4]
        let listed = try json(
            await network.run(
                Self.probe,
                addresses.flatMap { ["--address", $0] } + ["--port", "\(port)", "--connect-timeout-ms", "2000"]
            ).stdout
        )
        #expect(listed["ok"] as? Bool == true, "\(listed)")
        #expect(listed["body"] as? String == "probe", "\(listed)")

        // The same by name, resolved from a hosts file to all four (IPv6 sorted first).
        let hosts = addresses.map { "\($0) api.happy.test\n" }.joined()
        let named = try json(
            await network.run(
                Self.probe,
                ["--host", "api.happy.test", "--port", "\(port)", "--connect-timeout-ms", "2000"],
                hosts: "127.0.0.1 localhost\n" + hosts
            ).stdout
        )
        #expect(named["ok"] as? Bool == true, "\(named)")
        // Reported, not asserted (no timing assertions in tests): about 250 ms plus the handshake.
        print(
            "Happy Eyeballs: connected after \(listed["connected_ms"] ?? "?") ms (addresses), "
                + "\(named["connected_ms"] ?? "?") ms (name); a silent address alone timed out after \(silent["elapsed_ms"] ?? "?") ms"
        )
    }
}
