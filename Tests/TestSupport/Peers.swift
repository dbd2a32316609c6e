import Foundation

/// The local sandbox: the grpcio test service (TLS and plaintext) and the Authlib OAuth issuer.
public struct SandboxInfo: Sendable {
    public let process: PeerProcess
    public var host: String { process.string("host") }
    public var tlsPort: Int { process.int("grpc_tls_port") }
    public var plaintextPort: Int { process.int("grpc_plaintext_port") }
    /// Path of the CA certificate (PEM) the sandbox generated at start.
    public var caCertificatePath: String { process.string("ca_cert") }
    /// The name the server certificate is valid for besides 127.0.0.1 and ::1.
    public var serverName: String { process.string("server_name") }
    /// Other DNS names the server certificate is valid for (virtual hosts the service answers to,
    /// self-signed JWTs for them included).
    public var serverAliases: [String] {
        (process.info["server_aliases"] as? [any Sendable])?.compactMap { $0 as? String } ?? []
    }
    /// The issuer URL (`http://127.0.0.1:PORT`).
    public var issuer: String { process.string("issuer") }
    public var user: String { process.string("user") }
    public var scope: String { process.string("scope") }
    /// Static tokens the test service accepts as `user` with `scope`.
    public var staticTokens: [String] {
        (process.info["static_tokens"] as? [any Sendable])?.compactMap { $0 as? String } ?? []
    }
    /// The CA certificate's PEM text.
    public var caCertificatePEM: String { (try? String(contentsOfFile: caCertificatePath, encoding: .utf8)) ?? "" }
}

/// The scriptable raw HTTP/2 server (Python h2) that produces faulty responses.
public struct FaultServerInfo: Sendable {
    public let process: PeerProcess
    public var host: String { process.string("host") }
    /// The port of a named personality (`h2c`, `h2c_limited`, `tls`, `tls_no_alpn`, ...).
    public func port(_ name: String) -> Int {
        ((process.info["ports"] as? [String: any Sendable])?[name] as? Int) ?? 0
    }
}

/// Starts each shared peer once per test process and hands the same one to every test.
public actor Peers {
    /// The static token the shared sandbox accepts.
    public static let staticToken = "sandbox-static-token-\(UInt64.random(in: 1...UInt64.max))"

    private static let shared = Peers()
    private var sandbox: Task<SandboxInfo, any Error>?
    private var faults: Task<FaultServerInfo, any Error>?

    /// The shared sandbox (started on first use).
    public static func sandbox() async throws -> SandboxInfo { try await shared.startSandbox() }

    /// The shared fault server (started on first use), with TLS personalities using a throwaway cert.
    public static func faultServer() async throws -> FaultServerInfo { try await shared.startFaults() }

    /// A sandbox of one's own, for tests that need particular options (e.g. a short token lifetime),
    /// started off the cooperative pool (``PeerProcess/launch(script:name:arguments:readyTimeout:)``).
    public static func launchSandbox(_ arguments: [String] = [], name: String = "sandbox") async throws -> SandboxInfo {
        SandboxInfo(
            process: try await PeerProcess.launch(
                script: "Examples/Sandbox/sandbox.py",
                name: name,
                arguments: arguments
            )
        )
    }

    private func startSandbox() async throws -> SandboxInfo {
        if let sandbox { return try await sandbox.value }
        let task = Task.detached {
            try await Peers.launchSandbox(["--static-token", Peers.staticToken])
        }
        sandbox = task
        return try await task.value
    }

    private func startFaults() async throws -> FaultServerInfo {
        if let faults { return try await faults.value }
        let task = Task.detached { () throws -> FaultServerInfo in
            // The fault server's TLS personalities reuse the sandbox's CA-signed certificate.
            let sandbox = try await Peers.sandbox()
            let dir = sandbox.process.stateDirectory
            let process = try await PeerProcess.launch(
                script: "Tests/Peers/h2_fault_server.py",
                name: "faults",
                arguments: [
                    "--tls-cert", dir.appendingPathComponent("server.pem").path,
                    "--tls-key", dir.appendingPathComponent("server.key").path,
                ]
            )
            return FaultServerInfo(process: process)
        }
        faults = task
        return try await task.value
    }
}
