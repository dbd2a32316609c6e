import AuthRPC
import AuthSampleService
import Foundation
import OAuth2
import TestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The sandbox's Authlib issuer, driven through its test-only endpoints (clients of one's own,
/// device approval, counters, revocation behind a session's back, outages).
struct SandboxIssuer: Sendable {
    let sandbox: SandboxInfo
    let url: URL
    let configuration: ServiceConfiguration
    /// Its HTTP endpoints, the test-only ones included.
    let endpoints: SandboxIssuerEndpoints

    static let scopes = ["openid", "email", ServiceConfiguration.googleTestScope]

    /// The shared sandbox's issuer.
    static func shared() async throws -> SandboxIssuer {
        try await SandboxIssuer(sandbox: Peers.sandbox())
    }

    init(sandbox: SandboxInfo) async throws {
        self.sandbox = sandbox
        url = URL(string: sandbox.issuer)!
        endpoints = SandboxIssuerEndpoints(url: url)
        configuration = try await ServiceConfiguration.discover(issuer: url)
    }

    /// A client of one's own, so counters and revocations concern this test only.
    func makeClient(
        confidential: Bool = false,
        authentication: ClientAuthenticationMethod? = nil,
        tokenLifetime: Int? = nil,
        deviceInterval: Int = 0,
        grantTypes: [String]? = nil
    ) async throws -> OAuthClient {
        var body: [String: any Sendable] = ["confidential": confidential, "device_interval": deviceInterval]
        if let authentication { body["auth_method"] = authentication.rawValue }
        if let tokenLifetime { body["token_lifetime"] = tokenLifetime }
        if let grantTypes { body["grant_types"] = grantTypes }
        let answer = try await post("/sandbox/clients", json: body)
        return OAuthClient(
            id: answer["client_id"] as! String,
            secret: answer["client_secret"] as? String,
            authentication: authentication
        )
    }

    /// Signs the sandbox user in with the device flow, approving through the test endpoint.
    func signIn(_ client: OAuthClient, scopes: [String] = SandboxIssuer.scopes) async throws -> AuthState {
        let flow = DeviceAuthorizationFlow(configuration: configuration, client: client, scopes: scopes)
        let authorization = try await flow.start()
        try await approve(authorization.userCode)
        return try await flow.waitForApproval(of: authorization)
    }

    func approve(_ userCode: String) async throws {
        _ = try await post("/sandbox/device/approve", form: ["user_code": userCode])
    }
    func deny(_ userCode: String) async throws {
        _ = try await post("/sandbox/device/deny", form: ["user_code": userCode])
    }
    func forceSlowDown(_ userCode: String) async throws {
        _ = try await post("/sandbox/device/slow-down", form: ["user_code": userCode])
    }
    func revokeEverything(of client: OAuthClient) async throws {
        _ = try await post("/sandbox/revoke-all", form: ["client_id": client.id])
    }
    func revokeAccessTokens(of client: OAuthClient) async throws {
        _ = try await post("/sandbox/expire-access-tokens", form: ["client_id": client.id])
    }
    /// Stops the issuer listening for `seconds` (or, with `flag`, until that file is removed,
    /// `seconds` at most), and returns once it no longer accepts connections (werkzeug's
    /// shutdown takes up to half a second, and a request that arrives meanwhile is still answered);
    /// throws if it still does after a minute.
    func outage(seconds: Double, whileExists flag: URL? = nil) async throws {
        var form = ["seconds": "\(seconds)"]
        if let flag { form["while_exists"] = flag.path }
        _ = try await post("/sandbox/outage", form: form)
        let port = url.port ?? 80
        try await eventually("the issuer stops listening for its outage") { !LoopbackSocket.isListening(port: port) }
    }

    /// Makes the token endpoint wait `delayMilliseconds` and then answer normally, or with HTTP
    /// `status` (0: normally), for `client` only. `tokenBehaviour(of: client)` restores it.
    func tokenBehaviour(of client: OAuthClient, delayMilliseconds: Int = 0, status: Int = 0) async throws {
        _ = try await post(
            "/sandbox/token-behaviour",
            form: ["client_id": client.id, "delay_ms": "\(delayMilliseconds)", "status": "\(status)"]
        )
    }

    /// Holds `client`'s token requests at the token endpoint (counted, then unanswered) until
    /// ``releaseTokenRequests(of:)``, 60 s at most: a refresh in flight ends when the test says.
    func holdTokenRequests(of client: OAuthClient) async throws {
        _ = try await post("/sandbox/token-behaviour", form: ["client_id": client.id, "hold": "1"])
    }

    /// Lets `client`'s held token requests be answered; later ones are no longer held.
    func releaseTokenRequests(of client: OAuthClient) async throws {
        _ = try await post("/sandbox/token-release", form: ["client_id": client.id])
    }

    /// The issuer URL of a tenant whose discovery document names `endpoints` instead of the issuer's own.
    func tenant(endpoints: [String: String]) async throws -> URL {
        let answer = try await post("/sandbox/tenants", json: ["endpoints": endpoints])
        return URL(string: answer["issuer"] as! String)!
    }

    /// Waits until the issuer has received `count` more token requests from `client` than `before`
    /// (so one is in flight), a minute at most.
    func waitForTokenRequests(of client: OAuthClient, moreThan before: Int, count: Int = 1) async throws {
        try await eventually("the issuer sees \(count) more token request(s)") {
            try await counters(of: client)["token_requests", default: 0] >= before + count
        }
    }

    /// The issuer's counters for `client` (`token_requests`, `refresh_requests`, `device_polls`, …).
    func counters(of client: OAuthClient) async throws -> [String: Int] {
        try await endpoints.counters(of: client.id)
    }

    /// A TLS channel to the sandbox's grpcio test service, trusting its CA.
    func channel(options: CallOptions = CallOptions()) throws -> Channel {
        try Channel(
            target: "localhost:\(sandbox.tlsPort)",
            transportSecurity: .tls(TLSConfiguration(trustRoots: .certificates(pem: sandbox.caCertificatePEM))),
            defaultCallOptions: options
        )
    }

    /// Calls the auth sample's UnaryCall asking for the user and scope.
    func whoAmI(on channel: Channel, options: CallOptions) async throws -> AuthSample_Response {
        var request = AuthSample_Request()
        request.fillUsername = true
        request.fillOauthScope = true
        return try await AuthSample_TestServiceClient(channel: channel).unaryCall(request, options: options).message
    }

    /// POSTs `form` to `path` (`/sandbox/...`); the JSON answer, which must come with 200.
    private func post(_ path: String, form: [String: String]) async throws -> [String: Any] {
        try Self.ok(path, try await endpoints.post(String(path.dropFirst()), form: form))
    }

    /// POSTs `json` to `path` (`/sandbox/...`); the JSON answer, which must come with 200.
    private func post(_ path: String, json: [String: any Sendable]) async throws -> [String: Any] {
        try Self.ok(path, try await endpoints.post(String(path.dropFirst()), json: json))
    }

    private static func ok(_ path: String, _ answer: SandboxIssuerAnswer) throws -> [String: Any] {
        guard answer.status == 200 else { throw PeerError("\(path) answered \(answer.text)") }
        return answer.body
    }
}

/// A state whose access token expired a minute ago.
func expired(_ state: AuthState) -> AuthState {
    var state = state
    state.accessTokenIssuedAt = Date().addingTimeInterval(-3660)
    state.accessTokenExpiresAt = Date().addingTimeInterval(-60)
    return state
}

/// A temporary directory for file stores.
func temporaryDirectory() -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("oauth2-tests-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
