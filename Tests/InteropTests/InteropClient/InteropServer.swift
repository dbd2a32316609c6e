import Foundation
import TestSupport

/// The sandbox started with `--interop`: gRPC's interop server on grpcio (plaintext and TLS with
/// the CA the sandbox generates), the issuer, the metadata-server emulator and the
/// service-account key the auth cases use; and how to run interop_client against it.
struct InteropServer: Sendable {
    let sandbox: SandboxInfo

    /// One shared server for the suite.
    static let shared = Task { InteropServer(sandbox: try await Peers.launchSandbox(["--interop"], name: "interop")) }

    /// The test service's scope, which the metadata emulator and the key's grant hand out.
    static let scope = "https://www.googleapis.com/auth/xapi.zoo"

    enum Transport: String, Sendable {
        case plaintext, tls
    }

    var keyFile: String { sandbox.process.string("service_account_key") }
    var keyEmail: String { sandbox.process.string("service_account_email") }
    var metadataHost: String { sandbox.process.string("metadata_host") }
    var metadataEmail: String { sandbox.process.string("metadata_email") }

    /// The flags that reach the server over `transport`: TLS trusts only the sandbox's CA and
    /// names the server `localhost`, a name its certificate holds.
    func flags(_ transport: Transport) -> [String] {
        switch transport {
        case .plaintext:
            ["--server_host=127.0.0.1", "--server_port=\(sandbox.process.int("interop_plaintext_port"))"]
        case .tls:
            [
                "--server_host=127.0.0.1", "--server_host_override=localhost",
                "--server_port=\(sandbox.process.int("interop_tls_port"))", "--use_tls=true", "--use_test_ca=true",
                "--ca_file=\(sandbox.caCertificatePath)",
            ]
        }
    }

    /// Runs interop_client with `arguments` and exactly `environment` (plus PATH, an empty HOME,
    /// so no gcloud file of the machine's own is found, and the sanitizers' options, which
    /// `ChildProcess` carries).
    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> ChildProcessResult {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("interop-home-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        var variables = environment
        let inherited = ProcessInfo.processInfo.environment
        variables["PATH"] = inherited["PATH"] ?? "/usr/bin:/bin"
        variables["HOME"] = home.path
        return try await ChildProcess.run(
            PackageRoot.builtProduct("interop_client"),
            arguments,
            environment: variables,
            timeout: .seconds(180)
        )
    }
}
