import Foundation
import Testing
import TestSupport

/// `auth_sample call` and `status` with Google credentials (a service-account key, Application
/// Default Credentials), against the sandbox, with the real binary.
@Suite("auth_sample with Google credentials", .timeLimit(.minutes(3)))
struct GoogleCredentialsCLITests {
    static let scope = "https://www.googleapis.com/auth/xapi.zoo"

    /// The sandbox's Google files and the workspace to run in, with every secret in those files
    /// registered so no run may print one.
    struct Google {
        let workspace: CLIWorkspace
        var sandbox: SandboxInfo { workspace.sandbox }
        var keyPath: String { sandbox.process.string("service_account_key") }
        var email: String { sandbox.process.string("service_account_email") }
        var userPath: String { sandbox.process.string("authorized_user_file") }
        var quotaProject: String { sandbox.process.string("quota_project_id") }
        var tokenEndpoint: String { sandbox.process.string("token_endpoint") }
        var metadataHost: String { sandbox.process.string("metadata_host") }
        var metadataEmail: String { sandbox.process.string("metadata_email") }
        /// A HOME without gcloud's file, so ADC sees only what a test sets.
        var home: String { workspace.configHome.appendingPathComponent("home").path }
        let secrets: [String: String]

        static func make() async throws -> Google {
            let workspace = try await CLIWorkspace.make()
            let sandbox = workspace.sandbox
            var secrets: [String: String] = [:]
            let key = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: sandbox.process.string("service_account_key")))) as? [String: Any]
            let pem = key?["private_key"] as? String ?? ""
            for (index, line) in pem.split(separator: "\n").enumerated() where !line.hasPrefix("-----") {
                secrets["private key line \(index)"] = String(line)
            }
            let user = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: sandbox.process.string("authorized_user_file")))) as? [String: Any]
            secrets["the user's refresh token"] = user?["refresh_token"] as? String
            secrets["the user's client secret"] = user?["client_secret"] as? String
            try FileManager.default.createDirectory(at: workspace.configHome.appendingPathComponent("home"), withIntermediateDirectories: true)
            return Google(workspace: workspace, secrets: secrets)
        }

        /// Runs the tool with `environment` on top of a clean one (HOME without gcloud's file);
        /// checks no secret was printed, nor anything shaped like a JWT (an assertion, a self-signed token).
        func run(_ arguments: [String], environment: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation) async throws -> CLIResult {
            let result = try await workspace.run(arguments, extraSecrets: secrets, environment: ["HOME": home].merging(environment) { $1 },
                                                 sourceLocation: sourceLocation)
            #expect(!result.stdout.contains("eyJ") && !result.stderr.contains("eyJ"), "something JWT-shaped was printed", sourceLocation: sourceLocation)
            return result
        }
    }

    @Test("call --service-account-key: the server sees the service account and the scope; the output names the account and the key file")
    func serviceAccountKey() async throws {
        let google = try await Google.make()
        let result = try await google.run(["call", "--service-account-key", google.keyPath, "--verbose"] + google.workspace.tls)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("Used scope: \(Self.scope) on behalf of user \(google.email)"), "\(result)")
        #expect(result.stdout.contains("Credentials: service_account \(google.email) from --service-account-key \(google.keyPath); JWT bearer grant at \(google.tokenEndpoint)"),
                "\(result)")
    }

    @Test("call --service-account-key --self-signed-jwt --json: a self-signed JWT, no scope")
    func selfSignedJWT() async throws {
        let google = try await Google.make()
        let result = try await google.run(["call", "--json", "--service-account-key", google.keyPath, "--self-signed-jwt"] + google.workspace.tls)
        #expect(result.status == 0, "\(result)")
        let object = try #require(result.jsonObject, "\(result)")
        #expect(object["username"] as? String == google.email)
        #expect(object["oauth_scope"] as? String == "")
        #expect((object["credentials"] as? String)?.contains("self-signed JWTs") == true, "\(result)")
    }

    @Test("call --adc: an authorized_user file in GOOGLE_APPLICATION_CREDENTIALS calls as the user and sends its quota project; the metadata server as the instance")
    func applicationDefault() async throws {
        let google = try await Google.make()
        let user = try await google.run(["call", "--json", "--adc", "--user-token-endpoint", google.tokenEndpoint, "--metadata", "x-sandbox-echo-headers=1"]
                                        + google.workspace.tls, environment: ["GOOGLE_APPLICATION_CREDENTIALS": google.userPath])
        #expect(user.status == 0, "\(user)")
        let object = try #require(user.jsonObject, "\(user)")
        #expect(object["username"] as? String == google.sandbox.user)
        #expect((object["trailers"] as? [[String]])?.contains(["x-sandbox-user-project", google.quotaProject]) == true, "\(user)")
        #expect((object["credentials"] as? String)?.contains("(GOOGLE_APPLICATION_CREDENTIALS)") == true, "\(user)")

        let instance = try await google.run(["call", "--adc"] + google.workspace.tls, environment: ["GCE_METADATA_HOST": google.metadataHost])
        #expect(instance.status == 0, "\(instance)")
        #expect(instance.stdout.contains("on behalf of user \(google.metadataEmail)"), "\(instance)")
    }

    @Test("status --service-account-key and status --adc show type, principal and source, never a key or token")
    func status() async throws {
        let google = try await Google.make()
        let text = try await google.run(["status", "--service-account-key", google.keyPath])
        #expect(text.status == 0, "\(text)")
        #expect(text.stdout.contains("Google credentials (--service-account-key \(google.keyPath))"), "\(text)")
        #expect(text.stdout.contains("  Type:          service_account\n"), "\(text)")
        #expect(text.stdout.contains("  Principal:     \(google.email)\n"), "\(text)")
        #expect(text.stdout.contains("  Source:        \(google.keyPath)\n"), "\(text)")
        #expect(!text.stdout.contains("PRIVATE KEY"), "\(text)")

        let json = try await google.run(["status", "--json", "--adc"], environment: ["GOOGLE_APPLICATION_CREDENTIALS": google.userPath])
        #expect(json.status == 0, "\(json)")
        let object = try #require(json.jsonObject, "\(json)")
        #expect(object["credential_type"] as? String == "authorized_user")
        #expect(object["source"] as? String == google.userPath)
        #expect(object["quota_project_id"] as? String == google.quotaProject)
        #expect(object["found_in"] as? String == "\(google.userPath) (GOOGLE_APPLICATION_CREDENTIALS)")
    }

    @Test("--adc with nothing to find exits 26 and lists each place looked at; no request is made")
    func nothingFound() async throws {
        let google = try await Google.make()
        let result = try await google.run(["call", "--adc"] + google.workspace.tls)
        #expect(result.status == 26, "\(result)")
        #expect(result.stderr.hasPrefix("auth_sample: error: no Google Application Default Credentials found\n"), "\(result)")
        #expect(result.stderr.contains("1. GOOGLE_APPLICATION_CREDENTIALS: not set"), "\(result)")
        #expect(result.stderr.contains("2. gcloud's well-known file \(google.home)/.config/gcloud/application_default_credentials.json: no such file"), "\(result)")
        #expect(result.stderr.contains("3. the Compute Engine metadata server: GCE_METADATA_HOST is not set"), "\(result)")
        #expect(!result.stderr.contains("gRPC status:"), "nothing was called:\n\(result)")
    }

    @Test("an unreadable or invalid key file exits 26 naming it; a refused key 27 (UNAUTHENTICATED); an unreachable token endpoint 24 (UNAVAILABLE)")
    func failures() async throws {
        let google = try await Google.make()
        let directory = google.workspace.configHome
        let missing = directory.appendingPathComponent("missing.json").path
        let notJSON = directory.appendingPathComponent("not-json.json")
        try Data("not json".utf8).write(to: notJSON)
        var key = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: google.keyPath))) as! [String: Any]
        key["client_email"] = "nobody@sandbox-project.iam.gserviceaccount.com"
        let unknown = directory.appendingPathComponent("unknown.json")
        try JSONSerialization.data(withJSONObject: key).write(to: unknown)
        key["client_email"] = google.email
        key["token_uri"] = "http://127.0.0.1:\(Ports.closed())/token"
        let unreachable = directory.appendingPathComponent("unreachable.json")
        try JSONSerialization.data(withJSONObject: key).write(to: unreachable)

        let cases: [(String, Int32, String?, String)] = [
            (missing, 26, nil, "cannot use the Google credentials: cannot read \(missing)"),
            (notJSON.path, 26, nil, "\(notJSON.path) is not a JSON object"),
            (unknown.path, 27, "UNAUTHENTICATED", "the Google credentials service_account nobody@sandbox-project.iam.gserviceaccount.com"),
            (unreachable.path, 24, "UNAVAILABLE", "cannot get an access token for service_account \(google.email)"),
        ]
        for (file, status, code, message) in cases {
            let result = try await google.run(["call", "--service-account-key", file] + google.workspace.tls)
            #expect(result.status == status, "\(result)")
            #expect(result.stderr.hasPrefix("auth_sample: error: \(message)"), "\(result)")
            if let code { #expect(result.stderr.contains("gRPC status: \(code)"), "\(result)") }
        }
    }

    @Test("Google options that do not go together are usage errors")
    func usage() async throws {
        let google = try await Google.make()
        for arguments in [["--self-signed-jwt"], ["--scope", "x"], ["--adc", "--token", "x"], ["--adc", "--service-account-key", google.keyPath],
                          ["--service-account-key", google.keyPath, "--user-token-endpoint", "http://127.0.0.1:1/token"]] {
            let result = try await google.run(["call"] + arguments + google.workspace.tls)
            #expect(result.status == 64, "\(result)")
        }
    }
}
