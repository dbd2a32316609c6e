import AuthRPC
import AuthSampleService
import Foundation
import TestSupport
import Testing

/// Channels to the grpcio sandbox through Debian's tinyproxy, which resolves the target's
/// production-shaped name (`grpc.sandbox.test`) through a hosts file of its own: CONNECT before
/// TLS, TLS end to end with the target, Basic credentials from the proxy URL, and the proxy's
/// refusals as `unavailable` naming them.
@Suite("Channels through tinyproxy", .enabled(if: Tinyproxy.isAvailable, "needs tinyproxy and root (mount namespace)"))
struct TinyproxyTests {
    private static let targetName = "grpc.sandbox.test"

    private func channel(
        port: Int,
        proxy: String,
        tls: Bool = true
    ) async throws -> Channel {
        let sandbox = try await Peers.sandbox()
        // The sandbox's certificate names localhost: TLS verifies that name, end to end.
        let security: TransportSecurity =
            tls
            ? .tls(
                TLSConfiguration(
                    trustRoots: .certificates(pem: sandbox.caCertificatePEM),
                    serverHostnameOverride: "localhost"
                )
            )
            : .plaintext
        var options = CallOptions(credentials: .accessToken(Peers.staticToken))
        options.allowsInsecureCredentials = !tls
        return try Channel(
            target: "\(Self.targetName):\(port)",
            transportSecurity: security,
            defaultCallOptions: options,
            proxy: .http(proxy, noProxy: "")
        )
    }

    private func call(_ channel: Channel) async throws -> Grpc_Testing_SimpleResponse {
        var request = Grpc_Testing_SimpleRequest()
        request.fillUsername = true
        request.fillOauthScope = true
        return try await Grpc_Testing_TestServiceClient(channel: channel).unaryCall(request).message
    }

    @Test("TLS through tinyproxy reaches the sandbox; the proxy logged CONNECT only, never the token or the call")
    func tlsThroughTinyproxy() async throws {
        let sandbox = try await Peers.sandbox()
        let proxy = try await Tinyproxy.start(
            connectPorts: [sandbox.tlsPort],
            hosts: [Self.targetName: "127.0.0.1"]
        )
        defer { proxy.stop() }
        let response = try await call(try await channel(port: sandbox.tlsPort, proxy: proxy.url()))
        #expect(response.username == sandbox.user)
        #expect(response.oauthScope == sandbox.scope)
        let log = proxy.log
        #expect(log.contains("Request (file descriptor"), "\(log)")
        #expect(log.contains("CONNECT \(Self.targetName):\(sandbox.tlsPort) HTTP/1.1"), "\(log)")
        #expect(!log.contains(Peers.staticToken))
        #expect(!log.lowercased().contains("authorization"))
        #expect(!log.contains("grpc.testing"))
    }

    @Test("plaintext h2c through tinyproxy works too (the proxy only tunnels bytes)")
    func h2cThroughTinyproxy() async throws {
        let sandbox = try await Peers.sandbox()
        let proxy = try await Tinyproxy.start(
            connectPorts: [sandbox.plaintextPort],
            hosts: [Self.targetName: "127.0.0.1"]
        )
        defer { proxy.stop() }
        let response = try await call(try await channel(port: sandbox.plaintextPort, proxy: proxy.url(), tls: false))
        #expect(response.username == sandbox.user)
    }

    @Test("tinyproxy with Basic authentication: none (407) or wrong (401) is named in the error; the right pair works")
    func basicAuthentication() async throws {
        let sandbox = try await Peers.sandbox()
        let proxy = try await Tinyproxy.start(
            basicAuth: ("alice", "s3cr-t"),
            connectPorts: [sandbox.tlsPort],
            hosts: [Self.targetName: "127.0.0.1"]
        )
        defer { proxy.stop() }
        // tinyproxy answers missing credentials with 407 and wrong ones with 401.
        for (url, status, hint) in [
            (proxy.url(), "407 Proxy Authentication Required", "the proxy wants credentials"),
            (proxy.url(user: "alice", password: "wrong"), "401 Unauthorized", "did not accept the credentials"),
        ] {
            let channel = try await channel(port: sandbox.tlsPort, proxy: url)
            let error = await #expect(throws: RPCError.self) { try await call(channel) }
            #expect(error?.code == .unavailable, "\(String(describing: error))")
            #expect(error?.message.contains(status) == true, "\(String(describing: error))")
            #expect(error?.message.contains(hint) == true, "\(String(describing: error))")
            #expect(error?.message.contains("wrong") == false)
            #expect((error?.cause as? TransportError)?.kind == .proxyFailed)
        }
        // The password percent-encoded in the URL ('-' as %2D) is decoded before it is sent.
        let response = try await call(
            try await channel(port: sandbox.tlsPort, proxy: proxy.url(user: "alice", password: "s3cr%2Dt"))
        )
        #expect(response.username == sandbox.user)
    }

    @Test("a port tinyproxy does not allow for CONNECT is a 403, named in the error")
    func forbiddenPort() async throws {
        let sandbox = try await Peers.sandbox()
        let proxy = try await Tinyproxy.start(connectPorts: [443], hosts: [Self.targetName: "127.0.0.1"])
        defer { proxy.stop() }
        let channel = try await channel(port: sandbox.tlsPort, proxy: proxy.url())
        let error = await #expect(throws: RPCError.self) { try await call(channel) }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("403") == true, "\(String(describing: error))")
    }
}
