import AuthRPCSystem
import Foundation
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The sandbox every CLI test talks to: started once per test process, with a static token and
/// device codes that approve themselves after a second. It exits when the test process ends.
actor SandboxFixture {
    static let staticToken = "cli-static-token-\(UInt64.random(in: 1...UInt64.max))"

    private static let shared = SandboxFixture()
    private var launch: Task<SandboxInfo, any Error>?

    static func sandbox() async throws -> SandboxInfo { try await shared.start() }

    private func start() async throws -> SandboxInfo {
        if let launch { return try await launch.value }
        let task = Task.detached {
            try await Peers.launchSandbox(
                ["--static-token", SandboxFixture.staticToken, "--auto-approve-device-after", "1"],
                name: "sandbox-cli",
                priority: .shared
            )
        }
        launch = task
        return try await task.value
    }
}

/// The sandbox issuer, as the CLI's tests drive it.
typealias Issuer = SandboxIssuerEndpoints

extension SandboxIssuerEndpoints {
    /// A public client of one's own (device polling without delay), so counters concern one test.
    func makeClient() async throws -> String {
        let answer = try await post("sandbox/clients", json: ["device_interval": 0])
        guard answer.status == 200, let id = answer.body["client_id"] as? String else {
            throw PeerError("sandbox/clients answered \(answer.status)")
        }
        return id
    }

    func refreshRequests(of clientID: String) async throws -> Int {
        try await counters(of: clientID)["refresh_requests"] ?? 0
    }

    /// A refresh straight at the token endpoint: the HTTP status and the JSON answer.
    func refreshDirectly(_ refreshToken: String, clientID: String) async throws -> (status: Int, body: [String: Any]) {
        let answer = try await post(
            "token",
            form: ["grant_type": "refresh_token", "refresh_token": refreshToken, "client_id": clientID]
        )
        return (answer.status, answer.body)
    }
}

/// One test's world: its own session directory (`XDG_CONFIG_HOME`) and its own OAuth client.
///
/// Every `run` checks that the tool neither crashed nor printed a secret: the static token and
/// every token the session file has held before or after any run of this workspace.
final class CLIWorkspace: Sendable {
    let sandbox: SandboxInfo
    let issuer: Issuer
    let clientID: String
    let configHome: URL
    /// Secrets the output must never contain, by a name fit for failure messages.
    private let secrets: Locked<[String: String]>

    /// A workspace on `sandbox`, or on the shared CLI sandbox, with a client of its own (or
    /// `clientID`, for an issuer the test process cannot reach itself).
    static func make(sandbox: SandboxInfo? = nil, clientID: String? = nil) async throws -> CLIWorkspace {
        let sandbox = if let sandbox { sandbox } else { try await SandboxFixture.sandbox() }
        let issuer = Issuer(url: URL(string: sandbox.issuer)!)
        let client = if let clientID { clientID } else { try await issuer.makeClient() }
        return CLIWorkspace(sandbox: sandbox, issuer: issuer, clientID: client)
    }

    private init(sandbox: SandboxInfo, issuer: Issuer, clientID: String) {
        self.sandbox = sandbox
        self.issuer = issuer
        self.clientID = clientID
        configHome = FileManager.default.temporaryDirectory
            .appendingPathComponent("auth-sample-tests-\(UUID().uuidString)", isDirectory: true)
        try? FileManager.default.createDirectory(at: configHome, withIntermediateDirectories: true)
        secrets = Locked(["the static token": SandboxFixture.staticToken])
    }

    deinit {
        try? FileManager.default.removeItem(at: configHome)
    }

    /// The default session's file, as the tool places it.
    var sessionFile: URL {
        configHome.appendingPathComponent("swift-authrpc/default.json")
    }

    /// `--target` and `--ca-cert` for the sandbox's TLS test service.
    var tls: [String] { ["--target", "localhost:\(sandbox.tlsPort)", "--ca-cert", sandbox.caCertificatePath] }

    /// `login` with the device flow for this workspace's client.
    var loginArguments: [String] { ["login", "--issuer", sandbox.issuer, "--client-id", clientID, "--device"] }

    /// Runs the tool in this workspace, with `environment` added to its own, and checks the output
    /// is clean (no secret, no crash, no timeout).
    @discardableResult
    func run(
        _ arguments: [String],
        extraSecrets: [String: String] = [:],
        environment: [String: String] = [:],
        hosts: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> CLIResult {
        rememberSessionSecrets()
        secrets.withLock { $0.merge(extraSecrets) { $1 } }
        let variables = CLIRunner.environment(configHome: configHome).merging(environment) { $1 }
        let result = try await CLIRunner.run(arguments, environment: variables, hosts: hosts)
        rememberSessionSecrets()
        expectClean(result, sourceLocation: sourceLocation)
        return result
    }

    /// Signs in with the device flow (the sandbox approves by itself); the test stops if it fails.
    @discardableResult
    func login(sourceLocation: SourceLocation = #_sourceLocation) async throws -> CLIResult {
        let result = try await run(loginArguments, sourceLocation: sourceLocation)
        try #require(
            result.status == 0 && !result.signalled,
            "login failed:\n\(result)",
            sourceLocation: sourceLocation
        )
        return result
    }

    /// The session file's JSON object.
    func session() throws -> [String: Any] {
        let data = try Data(contentsOf: sessionFile)
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw PeerError("\(sessionFile.path) is not a JSON object")
        }
        return object
    }

    func storedRefreshToken() throws -> String? { try session()["refreshToken"] as? String }
    func storedAccessToken() throws -> String? { try session()["accessToken"] as? String }

    /// Rewrites the session file so its access token expired an hour ago (in place, mode kept).
    func expireStoredAccessToken() throws {
        try rewriteSession { object in
            let formatter = ISO8601DateFormatter()
            object["accessTokenIssuedAt"] = formatter.string(from: Date().addingTimeInterval(-7200))
            object["accessTokenExpiresAt"] = formatter.string(from: Date().addingTimeInterval(-3600))
        }
    }

    /// Writes `data` as the session file, creating it 0600 in a 0700 directory as the tool would.
    func writeSessionFile(_ data: Data) throws {
        let directory = sessionFile.deletingLastPathComponent()
        try FileManager.default.createDirectory(
            at: directory,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        guard
            FileManager.default.createFile(
                atPath: sessionFile.path,
                contents: data,
                attributes: [.posixPermissions: 0o600]
            )
        else {
            throw PeerError("cannot write \(sessionFile.path)")
        }
    }

    /// Rewrites the session file's JSON object with `change` (in place, mode kept).
    func rewriteSession(_ change: (inout [String: Any]) -> Void) throws {
        var object = try session()
        change(&object)
        let data = try JSONSerialization.data(
            withJSONObject: object,
            options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        )
        let handle = try FileHandle(forWritingTo: sessionFile)
        defer { try? handle.close() }
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: data)
    }

    private func rememberSessionSecrets() {
        guard let object = try? session() else { return }
        secrets.withLock { secrets in
            for key in ["accessToken", "refreshToken", "idToken"] {
                if let value = object[key] as? String, !value.isEmpty {
                    secrets["a stored \(key) (…\(value.suffix(4)))"] = value
                }
            }
        }
    }

    private func expectClean(_ result: CLIResult, sourceLocation: SourceLocation) {
        #expect(!result.timedOut, "did not finish in time:\n\(result)", sourceLocation: sourceLocation)
        #expect(!result.signalled, "killed by a signal:\n\(result)", sourceLocation: sourceLocation)
        let leaked = secrets.withLock { secrets in
            secrets.filter { result.stdout.contains($0.value) || result.stderr.contains($0.value) }.keys.sorted()
        }
        // The names only: a failure message must not spread the secret further.
        #expect(
            leaked.isEmpty,
            "auth_sample \(result.arguments.first ?? "") printed \(leaked.joined(separator: ", "))",
            sourceLocation: sourceLocation
        )
        for marker in [
            "Fatal error", "Current stack trace", "Stack dump", "Program crashed", "Backtrace", "Segmentation fault",
        ] {
            #expect(
                !result.stdout.contains(marker) && !result.stderr.contains(marker),
                "crash output (\(marker)):\n\(result)",
                sourceLocation: sourceLocation
            )
        }
    }
}
