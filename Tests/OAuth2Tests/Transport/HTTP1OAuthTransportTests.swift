import AuthRPC
import Foundation
import TestSupport
import Testing

@testable import OAuth2

/// The default OAuth transport against real peers: the hostile OAuth peer (framing, bounds,
/// time), the sandbox's Authlib issuer over https with its private CA (trust), tinyproxy and
/// the hostile proxy (the proxy rules).
@Suite("HTTP1OAuthTransport: the package's own HTTP/1.1 client for OAuth")
struct HTTP1OAuthTransportTests {
    static let client = OAuthClient(id: "http1-test-client", secret: "http1-test-secret")

    private func clientCredentials(
        at script: HostilePeer.Script,
        transport: any OAuthTransport = HTTP1OAuthTransport.standard
    ) async -> Result<FetchedTokens, OAuthError> {
        do throws(OAuthError) {
            let answer = try await ClientCredentialsFlow.authorize(
                configuration: HostilePeer.configuration(tokenEndpoint: script),
                client: Self.client,
                scopes: [],
                transport: transport
            )
            return .success(FetchedTokens(accessToken: answer.accessToken))
        } catch {
            return .failure(error)
        }
    }

    struct FetchedTokens {
        var accessToken: String?
    }

    private func failure(_ result: Result<FetchedTokens, OAuthError>) -> OAuthError? {
        if case .failure(let error) = result { return error }
        return nil
    }

    private static let tokenBody = #"{"access_token":"at-from-hostile","token_type":"Bearer","expires_in":3600}"#

    @Test(
        "chunked and to-the-close bodies are read whole; the request is one POST (client_secret_basic) with Connection: close"
    )
    func framingAndRequestShape() async throws {
        let peer = try await HostilePeer.shared()
        for length: any Sendable in ["chunked", "omit", "exact"] {
            let script = try await peer.script(["body": Self.tokenBody, "content_length": length, "chunk_bytes": 7])
            let result = await clientCredentials(at: script)
            guard case .success(let tokens) = result else {
                Issue.record("\(length): \(String(describing: failure(result)))")
                continue
            }
            #expect(tokens.accessToken == "at-from-hostile", "\(length)")
            let request = try #require(try await peer.stats(script).requests.first)
            #expect(request.method == "POST")
            #expect(
                request.headerNames == [
                    "Host", "Content-Type", "Accept", "Authorization", "User-Agent", "Content-Length", "Connection",
                ],
                "\(request.headerNames)"
            )
        }
    }

    @Test("over the header bounds: 200 fields, or one field of 70 KB, fail transient naming the bound")
    func headerBounds() async throws {
        let peer = try await HostilePeer.shared()
        let many = try await peer.script(["body": Self.tokenBody, "filler_headers": ["count": 200, "bytes": 10]])
        let manyError = try #require(failure(await clientCredentials(at: many)))
        #expect(manyError.kind == .transient)
        #expect(manyError.message.contains("more than 100 header fields"), "\(manyError.message)")
        let long = try await peer.script(["body": Self.tokenBody, "filler_headers": ["count": 1, "bytes": 70_000]])
        let longError = try #require(failure(await clientCredentials(at: long)))
        #expect(longError.message.contains("header is larger than 65536 bytes"), "\(longError.message)")
    }

    @Test("ambiguous framing and answers that are not HTTP are refused, shown printable")
    func malformed() async throws {
        let peer = try await HostilePeer.shared()
        let cases = [
            ("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxy", "Content-Length"),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\nxy", "both"),
            ("\u{1b}[2JNOT HTTP\r\n\r\n", "not HTTP/1.1: '\\x1b[2JNOT HTTP'"),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", "chunked"),
        ]
        for (raw, expected) in cases {
            let script = try await peer.script(["raw": raw])
            let error = try #require(failure(await clientCredentials(at: script)), "\(raw.debugDescription)")
            #expect(error.kind == .transient)
            #expect(error.message.contains(expected), "\(error.message)")
            #expect(!error.message.contains("\u{1b}"))
        }
    }

    @Test("a head that trickles in fails at the request's timeout, and the connection is closed")
    func tricklingHead() async throws {
        let peer = try await HostilePeer.shared()
        let script = try await peer.script(["body": Self.tokenBody, "head_drip_ms": 150])
        let request = OAuthHTTPRequest(url: script.url, timeout: .seconds(1))
        let error = await #expect(throws: OAuthTransportError.self) {
            _ = try await HTTP1OAuthTransport.standard.send(request)
        }
        #expect(error?.description.contains("no complete answer within 1") == true, "\(String(describing: error))")
        #expect(try await peer.settledStats(script).aborted == 1)
    }

    @Test("cancelling the task ends the exchange: the peer sees the connection go")
    func cancellation() async throws {
        let peer = try await HostilePeer.shared()
        let script = try await peer.script(["body": Self.tokenBody, "head_drip_ms": 500])
        let request = OAuthHTTPRequest(url: script.url, timeout: .seconds(60))
        let task = Task { try await HTTP1OAuthTransport.standard.send(request) }
        // Cancelled once the peer has the request (its head then trickles for seconds), so the
        // exchange is under way, however late a loaded machine runs the task.
        try await eventually("the peer receives the request") { try await peer.stats(script).hits >= 1 }
        task.cancel()
        await #expect(throws: CancellationError.self) { _ = try await task.value }
        #expect(try await peer.settledStats(script).aborted == 1)
    }

    @Test("nothing listening is a transient failure carrying the transport's kind")
    func refused() async throws {
        let url = URL(string: "http://127.0.0.1:\(Ports.closed())/token")!
        let error = await #expect(throws: OAuthError.self) {
            _ = try await OAuthHTTP.send(
                OAuthHTTPRequest(url: url),
                transport: HTTP1OAuthTransport.standard,
                purpose: "token"
            )
        }
        #expect(error?.kind == .transient)
        #expect((error?.underlying as? TransportError)?.kind == .connectionRefused, "\(String(describing: error))")
    }

    // MARK: - Trust

    @Test("an issuer with a private CA: untrusted by default, trusted with the CA as an explicit root")
    func privateCA() async throws {
        let sandbox = try await Peers.tlsIssuerSandbox()
        // The issuer's public name is not resolvable here: reach it by address, verify the name.
        let issuer = URL(string: "https://127.0.0.1:\(sandbox.issuerPort)")!
        let untrusted = await #expect(throws: OAuthError.self) {
            _ = try await OAuthHTTP.send(
                OAuthHTTPRequest(url: issuer.appendingPathComponent(".well-known/openid-configuration")),
                transport: HTTP1OAuthTransport.standard,
                purpose: "discovery"
            )
        }
        #expect(untrusted?.kind == .transient)
        #expect(
            (untrusted?.underlying as? TransportError)?.kind == .untrustedCertificate,
            "\(String(describing: untrusted))"
        )
        #expect(untrusted?.message.contains("not trusted") == true)

        for roots: TLSConfiguration.TrustRoots in [
            .certificates(pem: sandbox.caCertificatePEM), .systemAndCertificates(pem: sandbox.caCertificatePEM),
        ] {
            let transport = try HTTP1OAuthTransport(tls: TLSConfiguration(trustRoots: roots))
            let response = try await OAuthHTTP.send(
                OAuthHTTPRequest(url: issuer.appendingPathComponent(".well-known/openid-configuration")),
                transport: transport,
                purpose: "discovery"
            )
            #expect(response.statusCode == 200)
            let document = try JSONSerialization.jsonObject(with: response.body) as? [String: Any]
            #expect(document?["issuer"] as? String == sandbox.issuer)
        }
    }

    @Test("unusable settings are refused when the transport is made; the standard one reports them per request")
    func configurationErrors() async throws {
        let cases: [(TLSConfiguration, ProxyConfiguration, String)] = [
            (TLSConfiguration(serverHostnameOverride: "x.example"), .direct, "serverHostnameOverride"),
            (TLSConfiguration(trustRoots: .certificates(pem: "not PEM")), .direct, "PEM"),
            (TLSConfiguration(), .http("socks5://proxy:1080"), "only http:// proxies"),
        ]
        for (tls, proxy, expected) in cases {
            let error = #expect(throws: OAuthError.self) { try HTTP1OAuthTransport(tls: tls, proxy: proxy) }
            #expect(error?.kind == .invalidConfiguration)
            #expect(error?.message.contains(expected) == true, "\(String(describing: error))")
        }
        let deferred = HTTP1OAuthTransport(tls: TLSConfiguration(), proxy: .environment) {
            $0 == "https_proxy" ? "https://proxy.corp.example:3128" : nil
        }
        let error = await #expect(throws: OAuthError.self) {
            _ = try await deferred.send(OAuthHTTPRequest(url: URL(string: "https://oauth2.example.com/token")!))
        }
        #expect(error?.kind == .invalidConfiguration)
        #expect(error?.message.contains("https_proxy") == true, "\(String(describing: error))")
    }

    // MARK: - Proxy

    @Test("token and discovery requests through tinyproxy (Basic auth), TLS end to end: the proxy logs CONNECT only")
    func throughTinyproxy() async throws {
        try #require(Tinyproxy.isAvailable, "needs tinyproxy and root")
        let sandbox = try await Peers.tlsIssuerSandbox()
        let proxy = try await Tinyproxy.start(
            basicAuth: ("oauth", "pr0xy"),
            connectPorts: [sandbox.issuerPort],
            hosts: [Peers.publicSandboxName: "127.0.0.1"]
        )
        defer { proxy.stop() }
        let transport = try HTTP1OAuthTransport(
            tls: TLSConfiguration(trustRoots: .certificates(pem: sandbox.caCertificatePEM)),
            proxy: .http(proxy.url(user: "oauth", password: "pr0xy"), noProxy: "")
        )
        // The public name resolves nowhere here: only the proxy knows it.
        let configuration = try await ServiceConfiguration.discover(
            issuer: URL(string: sandbox.issuer)!,
            transport: transport
        )
        let client = OAuthClient(id: "sandbox-service", secret: "sandbox-service-secret")
        let tokens = try await ClientCredentialsFlow.authorize(
            configuration: configuration,
            client: client,
            scopes: ["https://www.googleapis.com/auth/xapi.zoo"],
            transport: transport
        )
        let accessToken = try #require(tokens.accessToken)
        let log = proxy.log
        #expect(log.contains("CONNECT \(Peers.publicSandboxName):\(sandbox.issuerPort) HTTP/1.1"), "\(log)")
        for secret in [accessToken, "sandbox-service-secret", "client_credentials", ".well-known"] {
            #expect(!log.contains(secret), "the proxy's log holds \(secret.prefix(12))")
        }
    }

    @Test("a proxy's refusal fails the request transient, naming it; plain http is never sent through a proxy")
    func proxyRules() async throws {
        let hostile = try await Peers.hostileProxy()
        let transport = try HTTP1OAuthTransport(proxy: .http(hostile.url, noProxy: ""))
        let refused = await #expect(throws: OAuthError.self) {
            _ = try await OAuthHTTP.send(
                OAuthHTTPRequest(url: URL(string: "https://status-407.hostile.test/token")!),
                transport: transport,
                purpose: "token"
            )
        }
        #expect(refused?.kind == .transient)
        #expect(
            refused?.message.contains("407 Proxy Authentication Required") == true,
            "\(String(describing: refused))"
        )
        #expect((refused?.underlying as? TransportError)?.kind == .proxyFailed)

        let target = "plain-\(UUID().uuidString.lowercased()).relay.test"
        let plain = await #expect(throws: OAuthError.self) {
            _ = try await transport.send(OAuthHTTPRequest(url: URL(string: "http://\(target):8080/token")!))
        }
        #expect(plain?.kind == .invalidConfiguration)
        #expect(plain?.message.contains("which could read it") == true, "\(String(describing: plain))")
        #expect(try hostile.requests().contains { ($0["target"] as? String)?.hasPrefix(target) == true } == false)
    }

    @Test(
        "a metadata host the request's allowance names is never reached through a proxy; without the allowance the same plain-http request is refused"
    )
    func metadataIsNeverProxied() async throws {
        let hostile = try await Peers.hostileProxy()
        let metadataName = "metadata-\(UUID().uuidString.lowercased()).invalid"
        let transport = try HTTP1OAuthTransport(proxy: .http(hostile.url, noProxy: ""))
        let request = OAuthHTTPRequest(
            url: URL(string: "http://\(metadataName):8080/computeMetadata/v1/instance/service-accounts/default/token")!,
            headers: [("Metadata-Flavor", "Google")],
            // Resolving the name fails at once; only a hang reaches this.
            timeout: .seconds(60)
        )
        // Plain http to the metadata server goes direct: here its name resolves nowhere, so the
        // attempt fails resolving it, and the proxy hears nothing of it.
        let error = await #expect(throws: OAuthError.self) {
            _ = try await OAuthHTTP.send(
                request,
                transport: transport,
                purpose: "metadata token",
                plaintext: .metadataServers(MetadataHosts(["\(metadataName):8080"]))
            )
        }
        #expect((error?.underlying as? TransportError)?.kind == .hostNotFound, "\(String(describing: error))")
        // Without the allowance the transport knows no metadata server: the proxy rule refuses it.
        let refused = await #expect(throws: OAuthError.self) { _ = try await transport.send(request) }
        #expect(refused?.message.contains("which could read it") == true, "\(String(describing: refused))")
        #expect(try hostile.requests().contains { ($0["target"] as? String)?.hasPrefix(metadataName) == true } == false)
    }
}
