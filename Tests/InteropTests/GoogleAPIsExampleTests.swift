import Foundation
import TestSupport
import Testing

/// Examples/GoogleAPIs as a user runs it: Application Default Credentials from
/// GOOGLE_APPLICATION_CREDENTIALS (the sandbox's service-account key, whose token endpoint is the
/// sandbox's issuer) and Pub/Sub reached by Google's own name, `pubsub.googleapis.com`, which a
/// hosts file of its own (in a private mount namespace) sends to a sandbox whose certificate
/// holds that name. The sandbox's front end refuses any call not routed as Google's would be.
@Suite("The GoogleAPIs example against the sandbox, by Google's name, with ADC")
struct GoogleAPIsExampleTests {
    /// A sandbox of this suite's own, whose certificate names pubsub.googleapis.com.
    static let sandbox = Task {
        try await Peers.launchSandbox(["--tls-name", "pubsub.googleapis.com"], name: "google-apis")
    }

    /// Runs the example in a mount namespace whose /etc/hosts sends Google's names to loopback,
    /// with exactly `environment` (plus PATH and an empty HOME).
    static func run(_ arguments: [String], environment: [String: String]) async throws -> ChildProcessResult {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("google-apis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let hosts = scratch.appendingPathComponent("hosts")
        try "127.0.0.1 localhost pubsub.googleapis.com\n".write(to: hosts, atomically: true, encoding: .utf8)
        var variables = environment
        variables["PATH"] = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        variables["HOME"] = scratch.path  // no gcloud file of the machine's own
        return try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/unshare"),
            [
                "-m", "/bin/sh", "-c", "mount --bind \"$0\" /etc/hosts && exec \"$@\"", hosts.path,
                PackageRoot.builtProduct("GoogleAPIsExample").path,
            ] + arguments,
            environment: variables,
            timeout: .seconds(120)
        )
    }

    @Test("With ADC it creates, publishes, pulls, lists, reads IAM and deletes, every call routed")
    func runsWithApplicationDefaultCredentials() async throws {
        let sandbox = try await Self.sandbox.value
        let result = try await Self.run(
            [
                "sandbox-project", "--endpoint", "pubsub.googleapis.com:\(sandbox.tlsPort)", "--ca-file",
                sandbox.caCertificatePath,
            ],
            environment: ["GOOGLE_APPLICATION_CREDENTIALS": sandbox.process.string("service_account_key")]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 7, "\(result.stdout)")
        #expect(lines.first?.hasPrefix("created topic projects/sandbox-project/topics/authrpc-example-") == true)
        #expect(lines.contains("published 3 messages"))
        #expect(lines.contains("pulled and acknowledged: one, two, three"))
        #expect(lines.contains("listed 1 topics in the project, ours among them"))
        #expect(lines.contains("IAM policy: version 1, 0 bindings; held: pubsub.topics.publish, pubsub.topics.delete"))
        #expect(lines.last == "deleted the subscription and the topic")
    }

    @Test("Without credentials it says where ADC looked, and makes no call")
    func noCredentials() async throws {
        let sandbox = try await Self.sandbox.value
        let result = try await Self.run(
            [
                "sandbox-project", "--endpoint", "pubsub.googleapis.com:\(sandbox.tlsPort)", "--ca-file",
                sandbox.caCertificatePath,
            ],
            environment: [:]
        )
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("GoogleAPIsExample: no usable Application Default Credentials:"))
        #expect(result.stderr.contains("GOOGLE_APPLICATION_CREDENTIALS"))
        #expect(result.stdout.isEmpty)
    }

    @Test("A certificate authority that did not sign Google's name's certificate is refused: the name is checked")
    func nameIsVerified() async throws {
        let sandbox = try await Self.sandbox.value
        // The system's roots do not include the sandbox's CA.
        let result = try await Self.run(
            ["sandbox-project", "--endpoint", "pubsub.googleapis.com:\(sandbox.tlsPort)"],
            environment: ["GOOGLE_APPLICATION_CREDENTIALS": sandbox.process.string("service_account_key")]
        )
        #expect(result.status == 1)
        #expect(result.stderr.contains("UNAVAILABLE"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }
}
