import Foundation
import TestSupport
import Testing

/// `auth_sample` on a Google VM behind a corporate proxy, as the field runs found it: only the
/// proxy (tinyproxy with Basic auth, `proxy.corp.example`) resolves the API's name, the tool
/// resolves the proxy's and the metadata server's names alone (private hosts files for both),
/// and both proxy variables are set.
extension GoogleCredentialsCLITests {
    @Test(
        "behind a corporate proxy that alone resolves the API's name: call --adc gets its token from metadata.google.internal directly (in no_proxy or not) and calls through the proxy, which sees only a CONNECT"
    )
    func corporateProxy() async throws {
        try #require(Tinyproxy.isAvailable, "needs tinyproxy and root (mount namespaces)")
        let apiName = "pubsub.googleapis.com"
        // A sandbox of its own: its certificate must also name the API.
        let sandbox = try await Peers.launchSandbox(["--tls-name", apiName], name: "cli-corporate-proxy")
        defer { sandbox.process.stop() }
        let google = try await Google.make(sandbox: sandbox)
        let proxy = try await Tinyproxy.start(
            basicAuth: ("corp", "pr0xy-pass"),
            connectPorts: [sandbox.tlsPort],
            hosts: [apiName: "127.0.0.1"]
        )
        defer { proxy.stop() }
        let metadataPort = try #require(google.metadataHost.split(separator: ":").last)
        let hosts = "127.0.0.1 localhost\n127.0.0.1 proxy.corp.example\n127.0.0.1 metadata.google.internal\n"
        let proxyURL = "http://corp:pr0xy-pass@proxy.corp.example:\(proxy.port)"
        let environment = [
            "GCE_METADATA_HOST": "metadata.google.internal:\(metadataPort)",
            "https_proxy": proxyURL, "http_proxy": proxyURL,
        ]
        let call = [
            "call", "--adc", "--target", "\(apiName):\(sandbox.tlsPort)", "--ca-cert", sandbox.caCertificatePath,
        ]

        // As the field's setup has it, the metadata server's name in no_proxy; then without it,
        // which must change nothing: the metadata server is never reached through a proxy.
        for noProxy in ["metadata.google.internal", nil] {
            var variables = environment
            variables["no_proxy"] = noProxy
            let before = try await google.workspace.issuer.accessTokens(of: google.metadataEmail).count
            let result = try await google.run(call, environment: variables, hosts: hosts)
            #expect(result.status == 0, "no_proxy \(noProxy ?? "unset"): \(result)")
            #expect(result.stdout.contains("on behalf of user \(google.metadataEmail)"), "\(result)")
            #expect(
                try await google.workspace.issuer.accessTokens(of: google.metadataEmail).count > before,
                "the token came from the metadata emulator"
            )
        }

        let log = proxy.log
        #expect(log.components(separatedBy: "CONNECT \(apiName):\(sandbox.tlsPort) HTTP/1.1").count - 1 == 2, "\(log)")
        #expect(!log.contains("metadata.google.internal") && !log.contains("computeMetadata"), "\(log)")
        for token in try await google.workspace.issuer.accessTokens(of: google.metadataEmail) {
            #expect(!log.contains(token), "the proxy's log holds a token")
        }

        // The tool cannot resolve the API's name itself: without the proxy the call fails naming it.
        var direct = environment
        direct["https_proxy"] = nil
        direct["http_proxy"] = nil
        let unresolved = try await google.run(call, environment: direct, hosts: hosts)
        #expect(unresolved.status != 0, "\(unresolved)")
        #expect((unresolved.stdout + unresolved.stderr).contains(apiName), "\(unresolved)")
    }
}
