import AuthRPC
import AuthRPCTransport
import AuthSampleService
import Foundation
import GoogleAuth
import TestSupport
import Testing

@testable import AuthRPCXDS

/// `google_default` channel credentials: the ADS stream over TLS with a token of the Application
/// Default Credentials, against the test control plane serving TLS with the sandbox's certificate
/// and asking the sandbox's issuer (Authlib, RFC 7662 introspection) about every stream's token.
extension XDSChannelTests {
    @Test(
        "google_default: the ADS stream goes over TLS carrying a token of the Application Default Credentials, which the issuer confirms; calls flow"
    )
    func googleDefaultCredentials() async throws {
        let sandbox = try await Peers.sandbox()
        let plane = try await ControlPlaneProcess.launch(
            arguments: Self.sandboxTLS(sandbox)
                + Self.checkingTokens(with: sandbox, scope: XDSScheme.googleDefaultScope)
        )
        defer { plane.process.stop() }
        let (backends, port) = try await Self.backends(["gd": "127.0.0.2"])
        defer { for backend in backends { backend.process.stop() } }
        try plane.command([
            "op": "basic", "listener": "gd-svc", "route": "gd-routes", "cluster": "gd-c", "eds": "gd-eds",
            "backends": [["127.0.0.2", String(port)]],
        ])
        Self.registerGoogleDefault(plane, sandbox)
        let channel = try Channel(target: "xds:///gd-svc", transportSecurity: .plaintext)
        defer { channel.close() }
        #expect(try await Self.call(channel, id: "google-default") == "gd")
        let judged = try plane.authorizations()
        #expect(!judged.isEmpty && judged.allSatisfy { $0.first == "accepted" }, "\(judged)")
    }

    @Test(
        "google_default: a token the control plane refuses (a scope it lacks) ends each stream and is never sent again; calls fail"
    )
    func googleDefaultRefused() async throws {
        let sandbox = try await Peers.sandbox()
        let plane = try await ControlPlaneProcess.launch(
            arguments: Self.sandboxTLS(sandbox)
                + Self.checkingTokens(with: sandbox, scope: "https://www.googleapis.com/auth/not-granted")
        )
        defer { plane.process.stop() }
        try plane.command([
            "op": "basic", "listener": "gd-refused", "route": "gd-refused-routes", "cluster": "gd-refused-c",
            "eds": "gd-refused-eds", "backends": [["127.0.0.2", "1"]],
        ])
        Self.registerGoogleDefault(plane, sandbox, doesNotExistTimeout: .seconds(1))
        let channel = try Channel(target: "xds:///gd-refused", transportSecurity: .plaintext)
        defer { channel.close() }
        await #expect(throws: RPCError.self) { _ = try await Self.call(channel, id: "google-default-refused") }
        let judged = try plane.authorizations()
        #expect(
            judged.count >= 2
                && judged.allSatisfy {
                    $0.prefix(2) == ["refused", "the token lacks scope https://www.googleapis.com/auth/not-granted"]
                },
            "\(judged)"
        )
        // The refused token is dropped: no later stream carries it. (The token engine lets one
        // invalidation through per interval, so later streams may share the next token.)
        #expect(!judged.dropFirst().contains { $0.last == judged.first?.last }, "\(judged)")
    }

    @Test("google_default to a control plane that does not speak TLS: no request and no token reach it, calls fail")
    func googleDefaultNeverInPlaintext() async throws {
        let sandbox = try await Peers.sandbox()
        let plane = try await ControlPlaneProcess.launch(arguments: Self.checkingTokens(with: sandbox))
        defer { plane.process.stop() }
        Self.registerGoogleDefault(plane, sandbox, doesNotExistTimeout: .seconds(1))
        let channel = try Channel(target: "xds:///gd-plain", transportSecurity: .plaintext)
        defer { channel.close() }
        await #expect(throws: RPCError.self) { _ = try await Self.call(channel, id: "google-default-plain") }
        #expect(try plane.requests().isEmpty)
        #expect(try plane.authorizations().isEmpty)
    }

    /// The control plane's arguments for ADS over TLS with the sandbox's certificate.
    private static func sandboxTLS(_ sandbox: SandboxInfo) -> [String] {
        ["--tls-cert", sandbox.process.string("server_cert"), "--tls-key", sandbox.process.string("server_key")]
    }

    /// The control plane's arguments for asking the sandbox's issuer about every stream's token
    /// (RFC 7662), requiring `scope` when given.
    private static func checkingTokens(with sandbox: SandboxInfo, scope: String? = nil) -> [String] {
        [
            "--introspection-url", "\(sandbox.issuer)/introspect",
            "--introspection-client", "sandbox-service", "--introspection-secret", "sandbox-service-secret",
        ] + (scope.map { ["--required-scope", $0] } ?? [])
    }

    /// Registers the scheme with a google_default bootstrap for `plane`: the sandbox's service
    /// account as the Application Default Credentials, and the sandbox's CA in place of the
    /// system's roots.
    private static func registerGoogleDefault(
        _ plane: ControlPlaneProcess,
        _ sandbox: SandboxInfo,
        doesNotExistTimeout: Duration? = nil
    ) {
        let bootstrap = try! XDSBootstrap(
            json: """
                {"xds_servers": [{"server_uri": "127.0.0.1:\(plane.port)", "channel_creds": [{"type": "google_default"}],
                  "server_features": ["xds_v3"]}],
                 "node": {"id": "xds-google-default-test"}}
                """
        )
        let environment = ApplicationDefaultCredentials.Environment(
            variables: [
                "GOOGLE_APPLICATION_CREDENTIALS": sandbox.process.string("service_account_key"), "HOME": "/nonexistent",
            ],
            productNamePath: "/nonexistent"
        )
        let roots = sandbox.caCertificatePEM
        XDSScheme.register(bootstrap: bootstrap, environment: environment) { settings in
            var tls = TLSClientConfiguration()
            tls.trustsSystemRoots = false
            tls.additionalTrustRootsPEM = [roots]
            settings.connection.tls = try? TLSContext(tls)
            if let doesNotExistTimeout { settings.doesNotExistTimeout = doesNotExistTimeout }
        }
    }
}

extension XDSChannelTests {
    @Test(
        "auth_sample to xds:/// through trafficdirector.googleapis.com (a hosts file of its own): google_default verifies that name over TLS, and the token is accepted"
    )
    func googleDefaultByProductionName() async throws {
        let sandbox = try await Peers.sandbox()
        let plane = try await ControlPlaneProcess.launch(
            arguments: ["--tls-names", "trafficdirector.googleapis.com"]
                + Self.checkingTokens(with: sandbox, scope: XDSScheme.googleDefaultScope)
        )
        defer { plane.process.stop() }
        let (backends, port) = try await Self.backends(["td-backend": "127.0.0.2"])
        defer { for backend in backends { backend.process.stop() } }
        try plane.command([
            "op": "basic", "listener": "td-svc", "route": "td-routes", "cluster": "td-c", "eds": "td-eds",
            "backends": [["127.0.0.2", String(port)]],
        ])
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("xds-td-\(UUID())")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        let hosts = home.appendingPathComponent("hosts")
        try "127.0.0.1 localhost\n127.0.0.1 trafficdirector.googleapis.com\n".write(
            to: hosts,
            atomically: true,
            encoding: .utf8
        )
        let bootstrap = """
            {"xds_servers": [{"server_uri": "trafficdirector.googleapis.com:\(plane.port)",
              "channel_creds": [{"type": "google_default"}], "server_features": ["xds_v3"]}],
             "node": {"id": "auth-sample-td"}}
            """
        let environment = [
            "PATH": "/usr/bin:/bin", "HOME": home.path, "XDG_CONFIG_HOME": home.path,
            "GRPC_XDS_BOOTSTRAP_CONFIG": bootstrap,
            "GOOGLE_APPLICATION_CREDENTIALS": sandbox.process.string("service_account_key"),
            // The control plane's CA stands in for the system's roots.
            "SSL_CERT_FILE": plane.process.string("ca_cert"),
        ]
        let capture = try await ChildProcess.capture(
            URL(fileURLWithPath: "/usr/bin/unshare"),
            ["-m", "sh", "-c", #"mount --bind "$1" /etc/hosts && shift && exec "$@""#, "sh", hosts.path]
                + [PackageRoot.builtProduct("auth_sample").path, "call", "--plaintext", "--anonymous"]
                + ["--target", "xds:///td-svc"],
            environment: environment,
            timeout: .seconds(60)
        )
        let stdout = String(decoding: capture.stdout, as: UTF8.self)
        let stderr = String(decoding: capture.stderr, as: UTF8.self)
        #expect(capture.exit?.code == 0, "\(stdout) \(stderr)")
        #expect(stdout.contains("on behalf of user td-backend"), "\(stdout)")
        let judged = try plane.authorizations()
        #expect(!judged.isEmpty && judged.allSatisfy { $0.first == "accepted" }, "\(judged)")
    }
}
