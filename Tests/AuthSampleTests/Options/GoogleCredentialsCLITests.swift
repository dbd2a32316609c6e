import Foundation
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `auth_sample call` and `status` with Google credentials (a service-account key, an
/// authorized_user file, the metadata server, Application Default Credentials), with the real
/// binary against the sandbox.
@Suite("auth_sample with Google credentials", .timeLimit(.minutes(3)))
struct GoogleCredentialsCLITests {
    static let scope = "https://www.googleapis.com/auth/xapi.zoo"

    /// The sandbox's Google files and a workspace to run in. Every run is checked for the secrets
    /// in those files, for every access token the issuer gave their accounts, and for anything
    /// shaped like a JWT (an assertion, a self-signed token).
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
        let userClientID: String
        let secrets: [String: String]

        static func make(sandbox: SandboxInfo? = nil) async throws -> Google {
            let workspace = try await CLIWorkspace.make(sandbox: sandbox)
            let sandbox = workspace.sandbox
            var secrets: [String: String] = [:]
            let key =
                try JSONSerialization.jsonObject(
                    with: Data(contentsOf: URL(fileURLWithPath: sandbox.process.string("service_account_key")))
                ) as? [String: Any]
            let pem = key?["private_key"] as? String ?? ""
            for (index, line) in pem.split(separator: "\n").enumerated() where !line.hasPrefix("-----") {
                secrets["private key line \(index)"] = String(line)
            }
            let user =
                try JSONSerialization.jsonObject(
                    with: Data(contentsOf: URL(fileURLWithPath: sandbox.process.string("authorized_user_file")))
                ) as? [String: Any]
            secrets["the user's refresh token"] = user?["refresh_token"] as? String
            secrets["the user's client secret"] = user?["client_secret"] as? String
            try FileManager.default.createDirectory(
                at: workspace.configHome.appendingPathComponent("home"),
                withIntermediateDirectories: true
            )
            return Google(workspace: workspace, userClientID: user?["client_id"] as? String ?? "", secrets: secrets)
        }

        /// Runs the tool with `environment` on top of a clean one (HOME without gcloud's file), with
        /// `hosts` as its /etc/hosts when given.
        func run(
            _ arguments: [String],
            environment: [String: String] = [:],
            hosts: String? = nil,
            sourceLocation: SourceLocation = #_sourceLocation
        ) async throws -> CLIResult {
            let result = try await workspace.run(
                arguments,
                extraSecrets: secrets,
                environment: ["HOME": home].merging(environment) { $1 },
                hosts: hosts,
                sourceLocation: sourceLocation
            )
            #expect(
                !result.stdout.contains("eyJ") && !result.stderr.contains("eyJ"),
                "something JWT-shaped was printed",
                sourceLocation: sourceLocation
            )
            var printed: [String] = []
            for account in [email, userClientID, metadataEmail, sandbox.process.string("impersonation_target")] {
                for token in try await workspace.issuer.accessTokens(of: account)
                where result.stdout.contains(token) || result.stderr.contains(token) {
                    printed.append("an access token of \(account)")
                }
            }
            // The names only: a failure message must not spread the token further.
            #expect(
                printed.isEmpty,
                "auth_sample \(arguments.first ?? "") printed \(printed.joined(separator: ", "))",
                sourceLocation: sourceLocation
            )
            return result
        }
    }

    @Test(
        "call --service-account-key: the server sees the service account and the scope; the output names the account and the key file"
    )
    func serviceAccountKey() async throws {
        let google = try await Google.make()
        let result = try await google.run(
            ["call", "--service-account-key", google.keyPath, "--verbose"] + google.workspace.tls
        )
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("Used scope: \(Self.scope) on behalf of user \(google.email)"), "\(result)")
        #expect(
            result.stdout.contains(
                "Credentials: service_account \(google.email) from --service-account-key \(google.keyPath); JWT bearer grant at \(google.tokenEndpoint)"
            ),
            "\(result)"
        )
        #expect(
            try await google.workspace.issuer.accessTokens(of: google.email).count > 0,
            "the grant was not used:\n\(result)"
        )
    }

    @Test("call --service-account-key --self-signed-jwt --json: a self-signed JWT, no scope")
    func selfSignedJWT() async throws {
        let google = try await Google.make()
        let result = try await google.run(
            ["call", "--json", "--service-account-key", google.keyPath, "--self-signed-jwt"] + google.workspace.tls
        )
        #expect(result.status == 0, "\(result)")
        let object = try #require(result.jsonObject, "\(result)")
        #expect(object["username"] as? String == google.email)
        #expect(object["oauth_scope"] as? String == "")
        #expect((object["credentials"] as? String)?.contains("self-signed JWTs") == true, "\(result)")
    }

    @Test(
        "call --authorized-user: calls as the user through its refresh token and sends its quota project as x-goog-user-project"
    )
    func authorizedUser() async throws {
        let google = try await Google.make()
        let result = try await google.run(
            [
                "call", "--json", "--authorized-user", google.userPath, "--user-token-endpoint", google.tokenEndpoint,
                "--metadata", "x-sandbox-echo-headers=1",
            ] + google.workspace.tls
        )
        #expect(result.status == 0, "\(result)")
        let object = try #require(result.jsonObject, "\(result)")
        #expect(object["username"] as? String == google.sandbox.user)
        #expect(
            (object["trailers"] as? [[String]])?.contains(["x-sandbox-user-project", google.quotaProject]) == true,
            "\(result)"
        )
        #expect(
            object["credentials"] as? String
                == "authorized_user \(google.userClientID) from --authorized-user \(google.userPath); refresh-token grant at \(google.tokenEndpoint); quota project \(google.quotaProject)",
            "\(result)"
        )
    }

    @Test(
        "call --adc: a key in GOOGLE_APPLICATION_CREDENTIALS calls as the service account, an authorized_user file as the user, the metadata server as the instance"
    )
    func applicationDefault() async throws {
        let google = try await Google.make()
        let key = try await google.run(
            ["call", "--adc"] + google.workspace.tls,
            environment: ["GOOGLE_APPLICATION_CREDENTIALS": google.keyPath]
        )
        #expect(key.status == 0, "\(key)")
        #expect(key.stdout.contains("on behalf of user \(google.email)"), "\(key)")
        #expect(
            key.stdout.contains(
                "from Application Default Credentials: \(google.keyPath) (GOOGLE_APPLICATION_CREDENTIALS); JWT bearer grant"
            ),
            "\(key)"
        )

        let user = try await google.run(
            [
                "call", "--json", "--adc", "--user-token-endpoint", google.tokenEndpoint, "--metadata",
                "x-sandbox-echo-headers=1",
            ]
                + google.workspace.tls,
            environment: ["GOOGLE_APPLICATION_CREDENTIALS": google.userPath]
        )
        #expect(user.status == 0, "\(user)")
        let object = try #require(user.jsonObject, "\(user)")
        #expect(object["username"] as? String == google.sandbox.user)
        #expect(
            (object["trailers"] as? [[String]])?.contains(["x-sandbox-user-project", google.quotaProject]) == true,
            "\(user)"
        )
        #expect((object["credentials"] as? String)?.contains("(GOOGLE_APPLICATION_CREDENTIALS)") == true, "\(user)")

        let instance = try await google.run(
            ["call", "--adc"] + google.workspace.tls,
            environment: ["GCE_METADATA_HOST": google.metadataHost]
        )
        #expect(instance.status == 0, "\(instance)")
        #expect(instance.stdout.contains("on behalf of user \(google.metadataEmail)"), "\(instance)")
        #expect(
            instance.stdout.contains(
                "Credentials: compute_engine default from Application Default Credentials: the metadata server (GCE_METADATA_HOST is set)"
            ),
            "\(instance)"
        )
    }

    @Test(
        "--service-account-key and GOOGLE_APPLICATION_CREDENTIALS through a Kubernetes Secret mount (key.json -> ..data/key.json, ..data -> ..<timestamp>) work; a FIFO, a directory or an oversized file swapped in behind the links fails at once naming what it is (before: 'is not a regular file' for the mount)"
    )
    func kubernetesSecretMount() async throws {
        let google = try await Google.make()
        let files = FileManager.default
        let volume = google.workspace.configHome.appendingPathComponent("secret-volume")
        try files.createDirectory(at: volume, withIntermediateDirectories: true)
        /// An update as the kubelet makes it: a new timestamped directory, then `..data` renamed over.
        func publish(_ stamp: String, _ make: (_ keyPath: String) throws -> Void) throws {
            let directory = volume.appendingPathComponent(stamp)
            try files.createDirectory(at: directory, withIntermediateDirectories: true)
            try make(directory.appendingPathComponent("key.json").path)
            let temporary = volume.appendingPathComponent("..data_tmp").path
            try files.createSymbolicLink(atPath: temporary, withDestinationPath: stamp)
            #expect(rename(temporary, volume.appendingPathComponent("..data").path) == 0)
        }
        try publish("..2026_11_26_01_00_00.000000001") { path in
            try files.copyItem(atPath: google.keyPath, toPath: path)
        }
        let keyPath = volume.appendingPathComponent("key.json").path
        try files.createSymbolicLink(atPath: keyPath, withDestinationPath: "..data/key.json")

        let direct = try await google.run(["call", "--service-account-key", keyPath] + google.workspace.tls)
        #expect(direct.status == 0, "\(direct)")
        #expect(direct.stdout.contains("on behalf of user \(google.email)"), "\(direct)")
        let adc = try await google.run(
            ["call", "--adc"] + google.workspace.tls,
            environment: ["GOOGLE_APPLICATION_CREDENTIALS": keyPath]
        )
        #expect(adc.status == 0, "\(adc)")
        #expect(adc.stdout.contains("on behalf of user \(google.email)"), "\(adc)")

        let swaps: [(stamp: String, make: (String) throws -> Void, says: String)] = [
            (
                "..2026_11_26_02_00_00.000000002", { #expect(mkfifo($0, 0o600) == 0) },
                "it is a FIFO, not a regular file"
            ),
            (
                "..2026_11_26_03_00_00.000000003",
                { try files.createDirectory(atPath: $0, withIntermediateDirectories: false) },
                "it is a directory, not a regular file"
            ),
            (
                "..2026_11_26_04_00_00.000000004",
                { try Data(repeating: UInt8(ascii: " "), count: 64 * 1024 + 1).write(to: URL(fileURLWithPath: $0)) },
                "it is larger than 65536 bytes"
            ),
        ]
        for swap in swaps {
            try publish(swap.stamp, swap.make)
            for (arguments, environment) in [
                (["status", "--service-account-key", keyPath], [:]),
                (["status", "--adc"], ["GOOGLE_APPLICATION_CREDENTIALS": keyPath]),
            ] {
                let result = try await google.run(arguments, environment: environment)
                #expect(!result.timedOut, "\(result)")
                #expect(result.status != 0, "\(result)")
                #expect(result.stderr.contains("cannot read \(keyPath): \(swap.says)"), "\(result)")
            }
        }
    }

    /// The sandbox's key with `changes`, written to a file of the workspace.
    func editedKey(_ google: Google, _ changes: [String: String], name: String) throws -> String {
        var key =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: google.keyPath)))
            as? [String: Any] ?? [:]
        for (field, value) in changes { key[field] = value }
        let path = google.workspace.configHome.appendingPathComponent(name).path
        try JSONSerialization.data(withJSONObject: key).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test(
        "status and call print a key's token_uri as the library does: without its query (before: the query was printed whole)"
    )
    func tokenURIRedacted() async throws {
        let google = try await Google.make()
        let marker = "SECRET-IN-TOKEN-URI"
        let path = try editedKey(google, ["token_uri": google.tokenEndpoint + "?sig=\(marker)"], name: "query-key.json")
        for arguments in [
            ["status", "--service-account-key", path], ["status", "--json", "--service-account-key", path],
        ] {
            let result = try await google.run(arguments)
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout.contains("JWT bearer grant at \(google.tokenEndpoint),"), "\(result)")
            #expect(!result.stdout.contains(marker) && !result.stderr.contains(marker), "\(result)")
        }
    }

    @Test(
        "a key of another universe is refused before anything is sent, naming both universes; --universe-domain of the key's universe lets it be used; status shows the universe"
    )
    func universeDomain() async throws {
        let google = try await Google.make()
        let universe = "example-universe.test"
        // A token endpoint where nothing listens: had the grant been tried, the call would fail
        // on the connection instead.
        let path = try editedKey(
            google,
            ["universe_domain": universe, "token_uri": "http://127.0.0.1:\(Ports.closed())/token"],
            name: "universe-key.json"
        )

        let refused = try await google.run(["call", "--service-account-key", path] + google.workspace.tls)
        #expect(refused.status != 0, "\(refused)")
        #expect(
            refused.stderr.contains(
                "the credential from \(path) is for universe \(universe) (universe_domain), but the endpoints are in universe googleapis.com"
            ),
            "\(refused)"
        )
        #expect(!refused.stderr.contains("127.0.0.1"), "nothing was sent to the token endpoint: \(refused)")

        let accepted = try await google.run(
            ["call", "--service-account-key", path, "--self-signed-jwt", "--universe-domain", universe]
                + google.workspace.tls
        )
        #expect(accepted.status == 0, "\(accepted)")
        let status = try await google.run(["status", "--service-account-key", path, "--universe-domain", universe])
        #expect(status.stdout.contains("  Universe:      \(universe)\n"), "\(status)")
    }

    @Test(
        "status --adc and call --adc reach the metadata server by its name: GCE_METADATA_HOST=metadata.google.internal:PORT, the name mapped to the loopback emulator in a private /etc/hosts (before: 'refusing the metadata token endpoint ...: OAuth endpoints must use https', exit 26)"
    )
    func metadataServerByName() async throws {
        let google = try await Google.make()
        let port = try #require(google.metadataHost.split(separator: ":").last)
        let authority = "metadata.google.internal:\(port)"
        // The program under test resolves the production name; nothing here sends to a link-local address.
        let hosts = "127.0.0.1 localhost\n127.0.0.1 metadata.google.internal\n"
        let before = try await google.workspace.issuer.accessTokens(of: google.metadataEmail).count

        let status = try await google.run(
            ["status", "--adc"],
            environment: ["GCE_METADATA_HOST": authority],
            hosts: hosts
        )
        #expect(status.status == 0, "\(status)")
        #expect(
            status.stdout.contains("  Principal:     \(google.metadataEmail) (as the metadata server says)\n"),
            "\(status)"
        )
        #expect(status.stdout.contains("  Source:        metadata server at \(authority)\n"), "\(status)")

        let call = try await google.run(
            ["call", "--adc"] + google.workspace.tls,
            environment: ["GCE_METADATA_HOST": authority],
            hosts: hosts
        )
        #expect(call.status == 0, "\(call)")
        #expect(call.stdout.contains("on behalf of user \(google.metadataEmail)"), "\(call)")
        #expect(
            try await google.workspace.issuer.accessTokens(of: google.metadataEmail).count > before,
            "the token came from the emulator"
        )
    }

    @Test(
        "the metadata server by its name says its universe: status shows it; call --adc is refused naming both universes, and goes through with GOOGLE_CLOUD_UNIVERSE_DOMAIN (before: the metadata server was always googleapis.com)"
    )
    func metadataUniverseByName() async throws {
        // A sandbox of its own: the universe knob changes the emulator for every caller.
        let sandbox = try await Peers.launchSandbox(name: "cli-metadata-universe")
        defer { sandbox.process.stop() }
        let google = try await Google.make(sandbox: sandbox)
        let universe = "example-universe.test"
        var knob = URLRequest(url: URL(string: "http://\(google.metadataHost)/sandbox/universe-domain")!)
        knob.httpMethod = "POST"
        knob.httpBody = Data(#"{"domain": "\#(universe)"}"#.utf8)
        let (_, answer) = try await URLSession.shared.data(for: knob)
        #expect((answer as? HTTPURLResponse)?.statusCode == 200)

        let port = try #require(google.metadataHost.split(separator: ":").last)
        let metadata = ["GCE_METADATA_HOST": "metadata.google.internal:\(port)"]
        let hosts = "127.0.0.1 localhost\n127.0.0.1 metadata.google.internal\n"

        let status = try await google.run(["status", "--adc"], environment: metadata, hosts: hosts)
        #expect(status.status == 0, "\(status)")
        #expect(status.stdout.contains("  Universe:      \(universe) (as the metadata server says)\n"), "\(status)")

        let refused = try await google.run(
            ["call", "--adc"] + google.workspace.tls,
            environment: metadata,
            hosts: hosts
        )
        #expect(refused.status != 0, "\(refused)")
        #expect(
            refused.stderr.contains(
                "is for universe \(universe) (the metadata server's universe/universe-domain), but the endpoints are in universe googleapis.com"
            ),
            "\(refused)"
        )

        let call = try await google.run(
            ["call", "--adc"] + google.workspace.tls,
            environment: metadata.merging(["GOOGLE_CLOUD_UNIVERSE_DOMAIN": universe]) { $1 },
            hosts: hosts
        )
        #expect(call.status == 0, "\(call)")
        #expect(call.stdout.contains("on behalf of user \(google.metadataEmail)"), "\(call)")
    }

    @Test(
        "status shows type, principal, source and where ADC found them: a key file, an authorized_user file, the metadata server"
    )
    func status() async throws {
        let google = try await Google.make()
        let key = try await google.run(["status", "--service-account-key", google.keyPath])
        #expect(key.status == 0, "\(key)")
        #expect(
            key.stdout == """
                Google credentials
                  Type:          service_account
                  Principal:     \(google.email)
                  Source:        \(google.keyPath)
                  Found in:      --service-account-key \(google.keyPath)
                  Project:       sandbox-project
                  Tokens:        JWT bearer grant at \(google.tokenEndpoint), scopes: \(Self.scope)

                """,
            "\(key)"
        )

        let adcKey = try await google.run(
            ["status", "--adc"],
            environment: ["GOOGLE_APPLICATION_CREDENTIALS": google.keyPath]
        )
        #expect(adcKey.status == 0, "\(adcKey)")
        #expect(
            adcKey.stdout.contains(
                "  Found in:      Application Default Credentials: \(google.keyPath) (GOOGLE_APPLICATION_CREDENTIALS)\n"
            ),
            "\(adcKey)"
        )

        let user = try await google.run(
            ["status", "--json", "--adc"],
            environment: ["GOOGLE_APPLICATION_CREDENTIALS": google.userPath]
        )
        #expect(user.status == 0, "\(user)")
        let object = try #require(user.jsonObject, "\(user)")
        #expect(object["credential_type"] as? String == "authorized_user")
        #expect(object["principal"] as? String == google.userClientID)
        #expect(object["source"] as? String == google.userPath)
        #expect(object["quota_project_id"] as? String == google.quotaProject)
        #expect(
            object["found_in"] as? String
                == "Application Default Credentials: \(google.userPath) (GOOGLE_APPLICATION_CREDENTIALS)"
        )

        let gcloud = URL(fileURLWithPath: google.home).appendingPathComponent(".config/gcloud")
        try FileManager.default.createDirectory(at: gcloud, withIntermediateDirectories: true)
        let wellKnown = gcloud.appendingPathComponent("application_default_credentials.json").path
        try FileManager.default.copyItem(atPath: google.userPath, toPath: wellKnown)
        let fromGcloud = try await google.run(["status", "--adc"])
        #expect(fromGcloud.status == 0, "\(fromGcloud)")
        #expect(
            fromGcloud.stdout.contains(
                "  Found in:      Application Default Credentials: \(wellKnown) (gcloud's application default credentials)\n"
            ),
            "\(fromGcloud)"
        )

        try FileManager.default.removeItem(atPath: wellKnown)
        let instance = try await google.run(
            ["status", "--adc"],
            environment: ["GCE_METADATA_HOST": google.metadataHost]
        )
        #expect(instance.status == 0, "\(instance)")
        #expect(
            instance.stdout.contains(
                "  Type:          compute_engine\n  Principal:     \(google.metadataEmail) (as the metadata server says)\n"
            ),
            "\(instance)"
        )
        #expect(
            instance.stdout.contains(
                "  Found in:      Application Default Credentials: the metadata server (GCE_METADATA_HOST is set)\n"
            ),
            "\(instance)"
        )
    }

    @Test(
        "status and call --verbose, for every kind of credential, print no private key, assertion, refresh token, client secret or access token"
    )
    func noSecrets() async throws {
        let google = try await Google.make()
        let tls = google.workspace.tls
        let runs: [([String], [String: String])] = [
            (["--service-account-key", google.keyPath], [:]),
            (["--service-account-key", google.keyPath, "--self-signed-jwt"], [:]),
            (["--authorized-user", google.userPath, "--user-token-endpoint", google.tokenEndpoint], [:]),
            (["--adc"], ["GOOGLE_APPLICATION_CREDENTIALS": google.keyPath]),
            (
                ["--adc", "--user-token-endpoint", google.tokenEndpoint],
                ["GOOGLE_APPLICATION_CREDENTIALS": google.userPath]
            ),
            (["--adc"], ["GCE_METADATA_HOST": google.metadataHost]),
        ]
        for (flags, environment) in runs {
            for json in [false, true] {
                let output = json ? ["--json"] : []
                let call = try await google.run(["call", "--verbose"] + output + flags + tls, environment: environment)
                #expect(call.status == 0, "\(call)")
                let status = try await google.run(["status", "--verbose"] + output + flags, environment: environment)
                #expect(status.status == 0, "\(status)")
                #expect(
                    !status.stdout.contains("PRIVATE KEY") && !call.stdout.contains("PRIVATE KEY"),
                    "\(status)\n\(call)"
                )
            }
        }
        // The checks above are only as good as the tokens they look for: the runs did get some.
        for account in [google.email, google.userClientID, google.metadataEmail] {
            #expect(
                try await google.workspace.issuer.accessTokens(of: account).count > 0,
                "no access token of \(account) to look for"
            )
        }
    }

    @Test("--adc with nothing to find exits 26 and lists each place looked at; no request is made")
    func nothingFound() async throws {
        let google = try await Google.make()
        let result = try await google.run(["call", "--adc"] + google.workspace.tls)
        #expect(result.status == 26, "\(result)")
        #expect(
            result.stderr.hasPrefix("auth_sample: error: no Google Application Default Credentials found\n"),
            "\(result)"
        )
        #expect(result.stderr.contains("1. GOOGLE_APPLICATION_CREDENTIALS: not set"), "\(result)")
        #expect(
            result.stderr.contains(
                "2. gcloud's well-known file \(google.home)/.config/gcloud/application_default_credentials.json: no such file"
            ),
            "\(result)"
        )
        #expect(
            result.stderr.contains("3. the Compute Engine metadata server: GCE_METADATA_HOST is not set"),
            "\(result)"
        )
        #expect(!result.stderr.contains("gRPC status:"), "nothing was called:\n\(result)")
    }

    @Test(
        "a key or authorized_user file that is missing, not JSON or of the other type is a usage error (64) naming the option and the file"
    )
    func badFiles() async throws {
        let google = try await Google.make()
        let directory = google.workspace.configHome
        let missing = directory.appendingPathComponent("missing.json").path
        let notJSON = directory.appendingPathComponent("not-json.json")
        try Data("not json".utf8).write(to: notJSON)
        var key =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: google.keyPath)))
            as! [String: Any]
        key.removeValue(forKey: "private_key")
        let noKey = directory.appendingPathComponent("no-private-key.json")
        try JSONSerialization.data(withJSONObject: key).write(to: noKey)

        let cases: [([String], String)] = [
            (["--service-account-key", missing], "--service-account-key: cannot read \(missing): no such file"),
            (["--service-account-key", notJSON.path], "--service-account-key: \(notJSON.path) is not a JSON object"),
            (["--service-account-key", noKey.path], "--service-account-key: \(noKey.path) has no private_key"),
            (
                ["--service-account-key", google.userPath],
                "--service-account-key: \(google.userPath) has type authorized_user, not service_account"
            ),
            (
                ["--authorized-user", google.keyPath],
                "--authorized-user: \(google.keyPath) has type service_account, not authorized_user"
            ),
            (["--service-account-key", google.keyPath, "--scope", "two words"], "scope"),
        ]
        for (flags, message) in cases {
            for command in [["call"] + flags + google.workspace.tls, ["status"] + flags] {
                let result = try await google.run(command)
                #expect(result.status == 64, "\(result)")
                #expect(result.stderr.hasPrefix("auth_sample: error: \(message)"), "\(result)")
                #expect(!result.stderr.contains("gRPC status:"), "nothing was called:\n\(result)")
            }
        }
    }

    @Test(
        "a broken file in GOOGLE_APPLICATION_CREDENTIALS exits 26 naming it; a refused key 27 (UNAUTHENTICATED); an unreachable token endpoint 24 (UNAVAILABLE)"
    )
    func failures() async throws {
        let google = try await Google.make()
        let directory = google.workspace.configHome
        let notJSON = directory.appendingPathComponent("not-json.json")
        try Data("not json".utf8).write(to: notJSON)
        var key =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: google.keyPath)))
            as! [String: Any]
        key["client_email"] = "nobody@sandbox-project.iam.gserviceaccount.com"
        let unknown = directory.appendingPathComponent("unknown.json")
        try JSONSerialization.data(withJSONObject: key).write(to: unknown)
        key["client_email"] = google.email
        key["token_uri"] = "http://127.0.0.1:\(Ports.closed())/token"
        let unreachable = directory.appendingPathComponent("unreachable.json")
        try JSONSerialization.data(withJSONObject: key).write(to: unreachable)

        let broken = try await google.run(
            ["call", "--adc"] + google.workspace.tls,
            environment: ["GOOGLE_APPLICATION_CREDENTIALS": notJSON.path]
        )
        #expect(broken.status == 26, "\(broken)")
        #expect(
            broken.stderr.hasPrefix("auth_sample: error: cannot use the Application Default Credentials: "),
            "\(broken)"
        )
        #expect(broken.stderr.contains(notJSON.path), "\(broken)")

        let cases: [(String, Int32, String, String)] = [
            (
                unknown.path, 27, "UNAUTHENTICATED",
                "the Google credentials service_account nobody@sandbox-project.iam.gserviceaccount.com"
            ),
            (unreachable.path, 24, "UNAVAILABLE", "cannot get an access token for service_account \(google.email)"),
        ]
        for (file, status, code, message) in cases {
            let result = try await google.run(["call", "--service-account-key", file] + google.workspace.tls)
            #expect(result.status == status, "\(result)")
            #expect(result.stderr.hasPrefix("auth_sample: error: \(message)"), "\(result)")
            #expect(result.stderr.contains("gRPC status: \(code)"), "\(result)")
        }
    }

    @Test("a token endpoint's refusal with escape sequences and a forged line is shown as printable text")
    func hostileRefusal() async throws {
        let google = try await Google.make(sandbox: try await HostilePeers.hostileSandbox())
        var key =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: google.keyPath)))
            as! [String: Any]
        key["client_email"] = "nobody@sandbox-project.iam.gserviceaccount.com"
        let unknown = google.workspace.configHome.appendingPathComponent("unknown.json")
        try JSONSerialization.data(withJSONObject: key).write(to: unknown)
        for output in [[], ["--json"]] {
            let result = try await google.run(
                ["call", "--service-account-key", unknown.path] + output + google.workspace.tls
            )
            #expect(result.status == 27, "\(result)")
            #expect(
                (result.stderr + result.stdout).contains(HostileText.forgedLine),
                "the refusal's text was not shown at all:\n\(result)"
            )
            HostileText.expectPrintable(result)
        }
    }

    @Test("Google options that do not go together are usage errors")
    func usage() async throws {
        let google = try await Google.make()
        for arguments in [
            ["--self-signed-jwt"], ["--scope", "x"], ["--user-token-endpoint", google.tokenEndpoint],
            ["--adc", "--token", "x"],
            ["--adc", "--service-account-key", google.keyPath],
            ["--authorized-user", google.userPath, "--service-account-key", google.keyPath],
            ["--authorized-user", google.userPath, "--anonymous"],
            ["--authorized-user", google.userPath, "--self-signed-jwt"],
            ["--service-account-key", google.keyPath, "--user-token-endpoint", google.tokenEndpoint],
            ["--authorized-user", google.userPath, "--user-token-endpoint", "not a url"],
        ] {
            let result = try await google.run(["call"] + arguments + google.workspace.tls)
            #expect(result.status == 64, "\(result)")
        }
    }
}
