import Foundation
import TestSupport
import Testing

/// `--timeout` and `--wait-timeout` take seconds or a number with a unit, within 1ms and 1h.
@Suite("auth_sample duration options", .timeLimit(.minutes(3)))
struct DurationOptionTests {
    @Test(
        "--timeout takes a bare number of seconds, or ms, s, m and h",
        arguments: ["30", "45.5", "40s", "2m", "1h", "30000ms"]
    )
    func acceptedTimeout(_ value: String) async throws {
        let workspace = try await CLIWorkspace.make()
        let result = try await workspace.run(
            ["call", "--timeout", value, "--token", SandboxFixture.staticToken] + workspace.tls
        )

        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("on behalf of user \(workspace.sandbox.user)"), "\(result)")
    }

    @Test("--timeout 500ms ends a call to a server sleeping 5 s with DEADLINE_EXCEEDED (exit 3)")
    func millisecondTimeout() async throws {
        let workspace = try await CLIWorkspace.make()
        let result = try await workspace.run(
            [
                "call", "--timeout", "500ms", "--metadata", "x-sandbox-sleep-ms=5000",
                "--token", SandboxFixture.staticToken,
            ] + workspace.tls
        )

        #expect(result.status == 3, "\(result)")
        #expect(result.stderr.contains("\ngRPC status: DEADLINE_EXCEEDED\n"), "\(result)")
    }

    @Test(
        "garbage, zero, negative, NaN, infinite and huge durations are usage errors (exit 64) saying what is accepted",
        arguments: [
            "abc", "", "0", "0ms", "0.0001", "-1", "nan", "inf", "1e300", "0x10", "1.5.2", "3 s", "3S", "2mm",
            "3601", "61m", "2h", "9223372036854775807", String(repeating: "9", count: 400),
        ]
    )
    func rejectedTimeout(_ value: String) async throws {
        let workspace = try await CLIWorkspace.make()
        let result = try await workspace.run(["call", "--timeout=\(value)", "--token", "x"] + workspace.tls)

        #expect(result.status == 64, "\(result)")
        #expect(result.stdout.isEmpty, "\(result)")
        let said = [
            "expected a duration such as 30 (seconds), 500ms, 3s, 2m or 1h", "shorter than the shortest limit, 1ms",
            "longer than the longest limit, 1h", "Missing value for '--timeout <duration>'",
        ]
        #expect(said.contains { result.stderr.contains($0) }, "\(result)")
    }

    @Test("--wait-timeout takes the same durations: 10m signs in, an absurd value is refused without a crash")
    func waitTimeout() async throws {
        let workspace = try await CLIWorkspace.make()
        let refused = try await workspace.run(workspace.loginArguments + ["--wait-timeout", "9223372036854775807"])
        #expect(refused.status == 64, "\(refused)")
        #expect(refused.stderr.contains("longer than the longest limit, 1h"), "\(refused)")
        #expect(!FileManager.default.fileExists(atPath: workspace.sessionFile.path))

        let login = try await workspace.run(workspace.loginArguments + ["--wait-timeout", "10m"])
        #expect(login.status == 0, "\(login)")
        #expect(login.stdout.contains("Signed in as \(workspace.sandbox.user)"), "\(login)")
    }
}
