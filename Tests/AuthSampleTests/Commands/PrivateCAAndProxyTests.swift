import Foundation
import TestSupport
import Testing

/// `auth_sample` where users run it: an issuer (the sandbox's Authlib issuer) over https with a
/// private CA under a production-shaped name (`sandbox.corp.example`, resolved through a private
/// hosts file in a mount namespace), reached directly or through tinyproxy as
/// `proxy.corp.example`. The same trust and proxy settings cover the channel and every OAuth
/// request.
@Suite(
    "auth_sample with a private CA and a corporate proxy",
    .enabled(if: Tinyproxy.isAvailable, "needs tinyproxy and root (mount namespaces)"),
    .timeLimit(.minutes(3))
)
struct PrivateCAAndProxyTests {
    private static let name = Peers.publicSandboxName

    /// The built-in public client of the sandbox (the test process cannot reach this issuer
    /// itself to make one: its name resolves only inside the tool's namespace).
    private func workspace() async throws -> (CLIWorkspace, SandboxInfo) {
        let sandbox = try await Peers.tlsIssuerSandbox()
        return (try await CLIWorkspace.make(sandbox: sandbox, clientID: "sandbox-cli"), sandbox)
    }

    private func login(_ sandbox: SandboxInfo) -> [String] {
        ["login", "--issuer", sandbox.issuer, "--client-id", "sandbox-cli", "--device"]
    }

    private func call(_ sandbox: SandboxInfo, port: Int? = nil) -> [String] {
        ["call", "--json", "--target", "\(Self.name):\(port ?? sandbox.tlsPort)"]
    }

    @Test(
        "login and refresh over https with a private CA: refused without --ca-cert, fine with it or with SSL_CERT_FILE"
    )
    func privateCA() async throws {
        let (workspace, sandbox) = try await workspace()
        let hosts = "127.0.0.1 localhost\n127.0.0.1 \(Self.name)\n"
        let caCert = ["--ca-cert", sandbox.caCertificatePath]

        let untrusted = try await workspace.run(login(sandbox), hosts: hosts)
        #expect(untrusted.status != 0, "\(untrusted)")
        #expect(untrusted.stderr.contains("not trusted"), "\(untrusted)")

        let trusted = try await workspace.run(login(sandbox) + caCert, hosts: hosts)
        #expect(trusted.status == 0, "\(trusted)")

        // The stored session's token endpoint is https with the private CA: --ca-cert covers it.
        try workspace.expireStoredAccessToken()
        let refreshed = try await workspace.run(call(sandbox) + caCert, hosts: hosts)
        #expect(refreshed.status == 0, "\(refreshed)")
        #expect(refreshed.jsonObject?["token_refreshed"] as? Bool == true, "\(refreshed)")
        #expect(refreshed.jsonObject?["username"] as? String == sandbox.user, "\(refreshed)")

        // SSL_CERT_FILE instead: OpenSSL's default roots, for the channel and the token endpoint.
        try workspace.expireStoredAccessToken()
        let environment = ["SSL_CERT_FILE": sandbox.caCertificatePath]
        let viaEnvironment = try await workspace.run(call(sandbox), environment: environment, hosts: hosts)
        #expect(viaEnvironment.status == 0, "\(viaEnvironment)")
        #expect(viaEnvironment.jsonObject?["token_refreshed"] as? Bool == true, "\(viaEnvironment)")
        let loginAgain = try await workspace.run(login(sandbox), environment: environment, hosts: hosts)
        #expect(loginAgain.status == 0, "\(loginAgain)")
    }

    @Test("through tinyproxy as proxy.corp.example (https_proxy with credentials): sign-in, refresh and the call")
    func throughProxy() async throws {
        let (workspace, sandbox) = try await workspace()
        let proxy = try await Tinyproxy.start(
            basicAuth: ("corp", "pr0xy-pass"),
            connectPorts: [sandbox.issuerPort, sandbox.tlsPort],
            hosts: [Self.name: "127.0.0.1"]
        )
        defer { proxy.stop() }
        // The tool resolves the proxy's name only: every other name is the proxy's to resolve.
        let hosts = "127.0.0.1 localhost\n127.0.0.1 proxy.corp.example\n"
        let environment = ["https_proxy": "http://corp:pr0xy-pass@proxy.corp.example:\(proxy.port)"]
        let caCert = ["--ca-cert", sandbox.caCertificatePath]

        let login = try await workspace.run(login(sandbox) + caCert, environment: environment, hosts: hosts)
        #expect(login.status == 0, "\(login)")
        try workspace.expireStoredAccessToken()
        let call = try await workspace.run(call(sandbox) + caCert, environment: environment, hosts: hosts)
        #expect(call.status == 0, "\(call)")
        #expect(call.jsonObject?["token_refreshed"] as? Bool == true, "\(call)")
        #expect(call.jsonObject?["username"] as? String == sandbox.user, "\(call)")

        let log = proxy.log
        #expect(log.contains("CONNECT \(Self.name):\(sandbox.issuerPort) HTTP/1.1"), "\(log)")
        #expect(log.contains("CONNECT \(Self.name):\(sandbox.tlsPort) HTTP/1.1"), "\(log)")
        for secret in [try workspace.storedAccessToken(), try workspace.storedRefreshToken()].compactMap({ $0 }) {
            #expect(!log.contains(secret), "the proxy's log holds a token")
        }
        #expect(!log.contains("refresh_token") && !log.contains("device_code") && !log.contains("grpc.testing"))

        // Without the proxy's credentials, the proxy's refusal is what the user reads.
        let refused = try await workspace.run(
            self.call(sandbox) + caCert,
            environment: ["https_proxy": "http://proxy.corp.example:\(proxy.port)"],
            hosts: hosts
        )
        #expect(refused.status != 0, "\(refused)")
        #expect(refused.stdout.contains("407") || refused.stderr.contains("407"), "\(refused)")
    }

    @Test("an unusable proxy setting is a usage error naming the variable, before anything is sent")
    func badProxySetting() async throws {
        let (workspace, sandbox) = try await workspace()
        let result = try await workspace.run(
            call(sandbox) + ["--token", "not-sent"],
            environment: ["https_proxy": "socks5://proxy.corp.example:1080"],
            hosts: "127.0.0.1 localhost\n"
        )
        #expect(result.status == 64, "\(result)")
        // --json: the failure is the one JSON object on stdout.
        let message = result.jsonObject?["error"] as? String ?? result.stdout
        #expect(message.contains("https_proxy"), "\(result)")
        #expect(message.contains("only http:// proxies"), "\(result)")
    }
}
