import AuthRPCSystem
import Foundation
import OAuth2
import OAuth2TestSupport
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("https is required off loopback")
struct EndpointSecurityTests {
    static let offLoopback = ServiceConfiguration(
        issuer: URL(string: "http://issuer.example.invalid")!,
        authorizationEndpoint: URL(string: "http://issuer.example.invalid/authorize")!,
        tokenEndpoint: URL(string: "http://issuer.example.invalid/token")!,
        deviceAuthorizationEndpoint: URL(string: "http://issuer.example.invalid/device")!,
        revocationEndpoint: URL(string: "http://issuer.example.invalid/revoke")!
    )
    static let client = OAuthClient(id: "https-test-client", secret: "https-test-secret")

    func expectRefusedBeforeSending(
        _ transport: RecordingTransport,
        _ body: () async throws(OAuthError) -> Void,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        do throws(OAuthError) {
            try await body()
            Issue.record("accepted", sourceLocation: sourceLocation)
        } catch {
            #expect(error.kind == .invalidConfiguration, "\(error.message)", sourceLocation: sourceLocation)
            #expect(error.message.contains("https"), "\(error.message)", sourceLocation: sourceLocation)
        }
        #expect(
            transport.sent.isEmpty,
            "requests were attempted: \(transport.sent)",
            sourceLocation: sourceLocation
        )
    }

    @Test("an http issuer off loopback is refused before discovery sends anything")
    func httpIssuerIsRefused() async {
        let transport = RecordingTransport(refusingOffLoopback: true)
        await expectRefusedBeforeSending(transport) { () async throws(OAuthError) in
            _ = try await ServiceConfiguration.discover(
                issuer: URL(string: "http://issuer.example.invalid")!,
                transport: transport
            )
        }
    }

    @Test("device login, token requests, refresh and revocation refuse http endpoints off loopback without sending")
    func flowsRefuseHTTPEndpoints() async {
        let configuration = Self.offLoopback
        let transport = RecordingTransport(refusingOffLoopback: true)
        await expectRefusedBeforeSending(transport) { () async throws(OAuthError) in
            _ = try await DeviceAuthorizationFlow(
                configuration: configuration,
                client: Self.client,
                scopes: ["s"],
                transport: transport
            ).start()
        }
        await expectRefusedBeforeSending(transport) { () async throws(OAuthError) in
            _ = try await ClientCredentialsFlow.authorize(
                configuration: configuration,
                client: Self.client,
                scopes: [],
                transport: transport
            )
        }
        let state = expired(
            AuthState(
                configuration: configuration,
                client: Self.client,
                scopes: ["s"],
                grant: GrantRecord(type: .deviceCode),
                accessToken: "at",
                refreshToken: "rt"
            )
        )
        await expectRefusedBeforeSending(transport) { () async throws(OAuthError) in
            _ = try await AuthSession(state: state, transport: transport).freshAccessToken()
        }
        await expectRefusedBeforeSending(transport) { () async throws(OAuthError) in
            try await AuthSession(state: state, transport: transport).revoke()
        }
        await expectRefusedBeforeSending(transport) { () async throws(OAuthError) in
            try await TokenRevocation.revoke(
                "rt",
                hint: .refreshToken,
                configuration: configuration,
                client: Self.client,
                transport: transport
            )
        }
    }

    @Test("the loopback flow refuses an http authorization endpoint off loopback before listening")
    func loopbackFlowRefusesHTTPAuthorizationEndpoint() {
        let error = #expect(throws: OAuthError.self) {
            _ = try LoopbackAuthorizationFlow(configuration: Self.offLoopback, client: Self.client, scopes: ["s"])
                .start()
        }
        #expect(error?.kind == .invalidConfiguration)
    }

    @Test(
        "a discovery document (from the loopback issuer) naming http endpoints elsewhere is refused; https ones are taken",
        arguments: [
            "token_endpoint", "device_authorization_endpoint", "revocation_endpoint", "authorization_endpoint",
            "userinfo_endpoint",
        ]
    )
    func discoveredHTTPEndpointsAreRefused(endpoint: String) async throws {
        let issuer = try await SandboxIssuer.shared()
        let transport = RecordingTransport(refusingOffLoopback: true)
        let tenant = try await issuer.tenant(endpoints: [endpoint: "http://\(endpoint).example.invalid/x"])
        let error = await #expect(throws: OAuthError.self) {
            try await ServiceConfiguration.discover(issuer: tenant, transport: transport)
        }
        #expect(error?.kind == .invalidConfiguration)
        #expect(error?.message.contains(endpoint) == true, "\(error?.message ?? "")")
        #expect(transport.sent.allSatisfy { $0.host == "127.0.0.1" }, "\(transport.sent)")

        let secure = try await issuer.tenant(endpoints: [endpoint: "https://\(endpoint).example.invalid/x"])
        let configuration = try await ServiceConfiguration.discover(issuer: secure, transport: transport)
        #expect(configuration.issuer == secure)
        #expect(transport.sent.allSatisfy { $0.host == "127.0.0.1" }, "\(transport.sent)")
    }

    @Test("a device authorization answer naming an http verification page off loopback is refused")
    func httpVerificationURIIsRefused() async throws {
        let peer = try await HostilePeer.shared()
        let device = try await peer.json(
            #"{"device_code":"dc","user_code":"ABCD-EFGH","verification_uri":"http://verify.example.invalid/device","expires_in":600,"interval":5}"#
        )
        let configuration = ServiceConfiguration(tokenEndpoint: device.url, deviceAuthorizationEndpoint: device.url)
        let error = await #expect(throws: OAuthError.self) {
            try await DeviceAuthorizationFlow(configuration: configuration, client: Self.client, scopes: []).start()
        }
        #expect(error?.kind == .invalidConfiguration)
        #expect(error?.message.contains("verification_uri") == true, "\(error?.message ?? "")")
    }
}
