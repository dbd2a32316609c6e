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
    /// The issuer URL (`http://127.0.0.1:PORT`; with `--issuer-tls --public-name NAME`,
    /// `https://NAME:PORT`).
    public var issuer: String { process.string("issuer") }
    /// The issuer's port.
    public var issuerPort: Int { Int(issuer.split(separator: ":").last ?? "") ?? 0 }
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
    /// The unix-domain socket (a path) serving the `h2c` personality.
    public var unixPath: String { process.string("unix") }
    /// The abstract unix socket name (Linux) serving the `h2c` personality.
    public var abstractUnixName: String { process.string("unix_abstract") }
}

/// The hostile HTTP CONNECT proxy (Tests/Peers/hostile_proxy.py): the CONNECT target's first
/// label picks what it does (`status-407.x:443`, `garbage.x:443`, `trickle.x:443`, …); targets
/// under `relay.test` are relayed to 127.0.0.1 at the same port.
public struct HostileProxyInfo: Sendable {
    public let process: PeerProcess
    public var host: String { process.string("host") }
    public var port: Int { process.int("port") }
    /// `http://host:port`.
    public var url: String { "http://\(host):\(port)" }

    /// The request heads the proxy recorded (`method`, `target`, `headers` as name/value pairs).
    public func requests() throws -> [[String: Any]] {
        let object = try JSONSerialization.jsonObject(with: try get("/requests")) as? [String: Any]
        return object?["requests"] as? [[String: Any]] ?? []
    }

    /// Whether any client sent `needle` through a relayed tunnel.
    public func relayed(_ needle: String) throws -> Bool {
        let query = needle.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let object = try JSONSerialization.jsonObject(with: try get("/search?needle=\(query)")) as? [String: Any]
        return object?["found"] as? Bool ?? true
    }

    private func get(_ path: String) throws -> Data {
        let socket = try LoopbackSocket(port: port)
        defer { socket.close() }
        try socket.send(Array("GET \(path) HTTP/1.1\r\nHost: proxy\r\n\r\n".utf8))
        let answer = try socket.receiveAll()
        guard let end = answer.firstRange(of: Array("\r\n\r\n".utf8)) else {
            throw PeerError("the hostile proxy's answer to \(path) has no end of header")
        }
        return Data(answer[end.upperBound...])
    }
}

/// One backend of a service (Tests/Peers/backend_server.py): grpcio's TestService on one address,
/// recording the id of every call it runs.
public struct BackendInfo: Sendable {
    public let process: PeerProcess
    /// What it answers in `SimpleResponse.username`.
    public var name: String { process.string("name") }
    /// The port it listens on (1 for a unix socket).
    public var port: Int { process.int("port") }
    /// The `x-call-id` of every call it ran, in order, as it recorded them.
    public var ranIDs: [String] {
        let text = (try? String(contentsOfFile: process.string("ids_file"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }
}

/// Starts each shared peer once per test process and hands the same one to every test.
public actor Peers {
    /// The static token the shared sandbox accepts.
    public static let staticToken = "sandbox-static-token-\(UInt64.random(in: 1...UInt64.max))"

    private static let shared = Peers()
    private var sandbox: Task<SandboxInfo, any Error>?
    private var faults: Task<FaultServerInfo, any Error>?
    private var hostileProxy: Task<HostileProxyInfo, any Error>?
    private var tlsIssuer: Task<SandboxInfo, any Error>?

    /// The name under which ``tlsIssuerSandbox()`` serves its issuer (and which its certificate
    /// carries); it resolves only through a private hosts file or a proxy that has one.
    public static let publicSandboxName = "sandbox.corp.example"

    /// A sandbox whose OAuth issuer speaks https with the sandbox's CA, under
    /// ``publicSandboxName`` (its URL `https://sandbox.corp.example:PORT`), device codes approved
    /// after a second (started on first use, shared).
    public static func tlsIssuerSandbox() async throws -> SandboxInfo { try await shared.startTLSIssuer() }

    private func startTLSIssuer() async throws -> SandboxInfo {
        if let tlsIssuer { return try await tlsIssuer.value }
        let task = Task.detached {
            try await Peers.launchSandbox(
                [
                    "--issuer-tls", "--public-name", Peers.publicSandboxName, "--auto-approve-device-after", "1",
                    "--static-token", Peers.staticToken,
                ],
                name: "sandbox-tls-issuer"
            )
        }
        tlsIssuer = task
        return try await task.value
    }

    /// The shared hostile proxy (started on first use).
    public static func hostileProxy() async throws -> HostileProxyInfo { try await shared.startHostileProxy() }

    private func startHostileProxy() async throws -> HostileProxyInfo {
        if let hostileProxy { return try await hostileProxy.value }
        let task = Task.detached {
            HostileProxyInfo(
                process: try await PeerProcess.launch(script: "Tests/Peers/hostile_proxy.py", name: "hostile-proxy")
            )
        }
        hostileProxy = task
        return try await task.value
    }

    /// The shared sandbox (started on first use).
    public static func sandbox() async throws -> SandboxInfo { try await shared.startSandbox() }

    /// The shared fault server (started on first use), with TLS personalities using a throwaway cert.
    public static func faultServer() async throws -> FaultServerInfo { try await shared.startFaults() }

    /// A sandbox of one's own, for tests that need particular options (e.g. a short token lifetime),
    /// started off the cooperative pool
    /// (``PeerProcess/launch(script:name:arguments:launcher:priority:readyTimeout:)``); `priority`
    /// is `.shared` for one that many suites wait for.
    public static func launchSandbox(
        _ arguments: [String] = [],
        name: String = "sandbox",
        priority: PeerStartGate.Priority = .own
    ) async throws -> SandboxInfo {
        SandboxInfo(
            process: try await PeerProcess.launch(
                script: "Examples/Sandbox/sandbox.py",
                name: name,
                arguments: arguments,
                priority: priority
            )
        )
    }

    /// A backend of one's own on `listen` (`127.0.0.2:PORT`, `unix:/path`, `unix-abstract:name`),
    /// appending the ids of the calls it runs to `idsFile` (a file of its own when nil).
    public static func launchBackend(listen: String, name: String, idsFile: String? = nil) async throws -> BackendInfo {
        BackendInfo(
            process: try await PeerProcess.launch(
                script: "Tests/Peers/backend_server.py",
                name: "backend-\(name)",
                arguments: ["--listen", listen, "--name", name] + (idsFile.map { ["--ids-file", $0] } ?? [])
            )
        )
    }

    private func startSandbox() async throws -> SandboxInfo {
        if let sandbox { return try await sandbox.value }
        let task = Task.detached {
            try await Peers.launchSandbox(["--static-token", Peers.staticToken], priority: .shared)
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
            // Short names: a unix socket path has room for 107 bytes.
            let unique = "authrpc-faults-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            let process = try await PeerProcess.launch(
                script: "Tests/Peers/h2_fault_server.py",
                name: "faults",
                arguments: [
                    "--tls-cert", dir.appendingPathComponent("server.pem").path,
                    "--tls-key", dir.appendingPathComponent("server.key").path,
                    "--unix", "/tmp/\(unique).sock",
                    "--unix-abstract", unique,
                ],
                priority: .shared
            )
            return FaultServerInfo(process: process)
        }
        faults = task
        return try await task.value
    }
}
