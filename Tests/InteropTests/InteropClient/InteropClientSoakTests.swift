import Foundation
import TestSupport
import Testing

/// The soak cases' accounting: an iteration slower than the latency bound counts as failed, the
/// case fails past --soak_max_failures, and the overall timeout ends it early, as a failure. The
/// server's x-sandbox-sleep-ms makes every call at least that slow, so the bounds below are
/// always exceeded, however loaded the machine.
@Suite("interop_client's soak accounting")
struct InteropClientSoakTests {
    static func soak(_ extra: [String]) async throws -> ChildProcessResult {
        let server = try await InteropServer.shared.value
        return try await InteropServer.run(
            server.flags(.plaintext) + ["--test_case=rpc_soak", "--additional_metadata=x-sandbox-sleep-ms:100"] + extra
        )
    }

    @Test("Three slow iterations fail a soak that allows two failures, and pass one that allows three")
    func latencyFailures() async throws {
        let bound = ["--soak_iterations=3", "--soak_per_iteration_max_acceptable_latency_ms=20"]
        let strict = try await Self.soak(bound + ["--soak_max_failures=2", "--soak_overall_timeout_seconds=120"])
        #expect(strict.status == 1, "\(strict.stderr)")
        #expect(strict.stderr.contains("failed soak iterations: expected at most 2 (--soak_max_failures), saw 3"))
        #expect(strict.stderr.components(separatedBy: "exceeds max acceptable latency: 20").count == 4)
        #expect(strict.stdout.contains("soak test ran: 3 / 3 iterations. Total failures: 3."))

        let lenient = try await Self.soak(bound + ["--soak_max_failures=3", "--soak_overall_timeout_seconds=120"])
        #expect(lenient.status == 0, "\(lenient.stderr)")
        #expect(lenient.stdout.hasSuffix("rpc_soak: passed\n"))
    }

    @Test("The overall timeout stops a soak before its iterations have all run, and fails it")
    func overallTimeout() async throws {
        let result = try await Self.soak([
            "--soak_iterations=50", "--soak_overall_timeout_seconds=1", "--soak_max_failures=50",
            "--soak_per_iteration_max_acceptable_latency_ms=60000",
        ])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(
            result.stderr.contains("soak iterations run within --soak_overall_timeout_seconds=1: expected 50, saw ")
        )
    }

    @Test("Several workers share the iterations", arguments: ["rpc_soak", "channel_soak"])
    func workers(_ testCase: String) async throws {
        let server = try await InteropServer.shared.value
        let result = try await InteropServer.run(
            server.flags(.tls) + [
                "--test_case=\(testCase)", "--soak_iterations=6", "--soak_num_threads=3",
                "--soak_per_iteration_max_acceptable_latency_ms=60000", "--soak_overall_timeout_seconds=120",
            ]
        )
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("soak test ran: 6 / 6 iterations. Total failures: 0."))
        for worker in 0..<3 {
            #expect(result.stderr.components(separatedBy: "worker \(worker): soak iteration: ").count == 3)
        }
    }

    @Test(
        "rpc_soak makes every call on one connection, channel_soak each on a new one",
        arguments: [("rpc_soak", 1), ("channel_soak", 4)]
    )
    func connections(_ testCase: String, expectedConnections: Int) async throws {
        let server = try await InteropServer.shared.value
        let name = "\(testCase.replacingOccurrences(of: "_", with: "-"))-\(UUID().uuidString)"
        let result = try await InteropServer.run(
            server.flags(.plaintext) + [
                "--test_case=\(testCase)", "--soak_iterations=4", "--additional_metadata=x-sandbox-record-peer:\(name)",
                "--soak_per_iteration_max_acceptable_latency_ms=60000", "--soak_overall_timeout_seconds=120",
            ]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let record = server.sandbox.process.stateDirectory.appendingPathComponent("interop-peers-\(name).txt")
        let peers = try String(contentsOf: record, encoding: .utf8).split(separator: "\n")
        #expect(peers.count == 4)
        #expect(Set(peers).count == expectedConnections, "\(peers)")
    }
}
