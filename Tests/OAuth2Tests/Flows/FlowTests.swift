import AuthRPC
import AuthRPCSystem
import AuthSampleService
import Foundation
import TestSupport
import Testing

@testable import OAuth2

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("Sign-in flows against the sandbox issuer")
struct FlowTests {
    @Test("device flow: pending while unanswered, slow_down honoured, approval gives a session that calls the service")
    func deviceFlowEndToEnd() async throws {
        let issuer = try await SandboxIssuer.shared()
        let client = try await issuer.makeClient(deviceInterval: 1)
        let flow = DeviceAuthorizationFlow(
            configuration: issuer.configuration,
            client: client,
            scopes: SandboxIssuer.scopes
        )
        let authorization = try await flow.start()
        #expect(authorization.interval == .seconds(1))
        #expect(authorization.verificationURI.absoluteString.hasPrefix(issuer.url.absoluteString))
        #expect(authorization.verificationURIComplete?.absoluteString.contains(authorization.userCode) == true)
        #expect(!authorization.description.contains(authorization.deviceCode))

        let events = Locked<[DeviceAuthorizationFlow.Event]>([])
        let approval = Task {
            try await flow.waitForApproval(of: authorization) { event in events.withLock { $0.append(event) } }
        }
        // Let it poll while pending, then make the issuer answer slow_down once, then approve.
        try await waitUntil { events.withLock { $0.contains(.pending(nextPollIn: .seconds(1))) } }
        try await issuer.forceSlowDown(authorization.userCode)
        try await waitUntil { events.withLock { $0.contains(.slowDown(interval: .seconds(6))) } }
        try await issuer.approve(authorization.userCode)
        let state = try await approval.value

        let counters = try await issuer.counters(of: client)
        #expect(counters["slow_down_violations", default: 0] == 0, "the flow polled faster than the interval")
        #expect(state.grant.type == .deviceCode)
        #expect(state.refreshToken != nil)
        let session = AuthSession(state: state)
        #expect(await session.userEmail == issuer.sandbox.user)
        #expect(await session.userID == "sandbox-user")
        #expect(await session.userEmailIsVerified == true)
        let response = try await issuer.whoAmI(
            on: try issuer.channel(),
            options: CallOptions(credentials: .provider(session))
        )
        #expect(response.username == issuer.sandbox.user)
        #expect(response.oauthScope.split(separator: " ").contains("https://www.googleapis.com/auth/xapi.zoo"))
    }

    @Test("device flow: a denied sign-in stops with access_denied")
    func deviceFlowDenied() async throws {
        let issuer = try await SandboxIssuer.shared()
        let client = try await issuer.makeClient()
        let flow = DeviceAuthorizationFlow(
            configuration: issuer.configuration,
            client: client,
            scopes: SandboxIssuer.scopes
        )
        let authorization = try await flow.start()
        try await issuer.deny(authorization.userCode)
        let error = await #expect(throws: OAuthError.self) { try await flow.waitForApproval(of: authorization) }
        #expect(error?.oauthErrorCode == "access_denied")
    }

    @Test("device flow: an unknown client is an authorization error at the start")
    func deviceFlowUnknownClient() async throws {
        let issuer = try await SandboxIssuer.shared()
        let flow = DeviceAuthorizationFlow(
            configuration: issuer.configuration,
            client: OAuthClient(id: "no-such-client"),
            scopes: ["openid"]
        )
        let error = await #expect(throws: OAuthError.self) { try await flow.start() }
        #expect(error?.oauthErrorCode == "invalid_client")
    }

    @Test("loopback + PKCE: the browser step driven by an HTTP client ends in a session that calls the service")
    func loopbackEndToEnd() async throws {
        let issuer = try await SandboxIssuer.shared()
        let client = try await issuer.makeClient()
        let flow = LoopbackAuthorizationFlow(
            configuration: issuer.configuration,
            client: client,
            scopes: SandboxIssuer.scopes,
            timeout: .seconds(30)
        )
        let pending = try flow.start()
        let query = try #require(
            URLComponents(url: pending.authorizationURL, resolvingAgainstBaseURL: false)?.queryItems
        )
        #expect(query.first { $0.name == "code_challenge_method" }?.value == "S256")
        #expect(query.first { $0.name == "code_challenge" }?.value?.count == 43)
        #expect(query.first { $0.name == "redirect_uri" }?.value == pending.redirectURI)
        #expect(pending.redirectURI.hasPrefix("http://127.0.0.1:"))

        // The "browser": follows the issuer's redirect to the loopback port.
        async let page = URLSession.shared.data(from: pending.authorizationURL)
        let state = try await pending.complete()
        let (body, response) = try await page
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: body, as: UTF8.self).contains("Signed in"))

        #expect(state.grant.type == .authorizationCode)
        #expect(state.grant.redirectURI == pending.redirectURI)
        let answer = try await issuer.whoAmI(
            on: try issuer.channel(),
            options: CallOptions(credentials: .provider(AuthSession(state: state)))
        )
        #expect(answer.username == issuer.sandbox.user)
    }

    @Test(
        "loopback: an error redirect (access_denied) is an authorization error; other paths get 404 and do not end the wait"
    )
    func loopbackDenied() async throws {
        let issuer = try await SandboxIssuer.shared()
        let client = try await issuer.makeClient()
        let pending = try LoopbackAuthorizationFlow(
            configuration: issuer.configuration,
            client: client,
            scopes: ["openid"],
            timeout: .seconds(30)
        ).start()
        let state = try #require(
            URLComponents(url: pending.authorizationURL, resolvingAgainstBaseURL: false)?.queryItems?.first {
                $0.name == "state"
            }?.value
        )
        let base = pending.redirectURI.replacingOccurrences(of: "/oauth2callback", with: "")
        let completion = Task { () async throws(OAuthError) -> AuthState in try await pending.complete() }
        let (_, favicon) = try await URLSession.shared.data(from: URL(string: base + "/favicon.ico")!)
        #expect((favicon as? HTTPURLResponse)?.statusCode == 404)
        let (_, denied) = try await URLSession.shared.data(
            from: URL(string: pending.redirectURI + "?error=access_denied&state=\(state)")!
        )
        #expect((denied as? HTTPURLResponse)?.statusCode == 400)
        let error = await #expect(throws: OAuthError.self) { try await completion.value }
        #expect(error?.oauthErrorCode == "access_denied")
    }

    @Test("loopback: no browser within the timeout is a clear flowFailed")
    func loopbackTimeout() async throws {
        let issuer = try await SandboxIssuer.shared()
        let pending = try LoopbackAuthorizationFlow(
            configuration: issuer.configuration,
            client: OAuthClient(id: "x"),
            scopes: [],
            timeout: .milliseconds(300)
        ).start()
        let error = await #expect(throws: OAuthError.self) { try await pending.complete() }
        #expect(error?.kind == .flowFailed)
        #expect(error?.message.contains("did not come back in time") == true)
    }

    @Test("client credentials (basic and post): a token for the client itself, renewed by asking again after expiry")
    func clientCredentials() async throws {
        let issuer = try await SandboxIssuer.shared()
        for method in [ClientAuthenticationMethod.clientSecretBasic, .clientSecretPost] {
            let client = try await issuer.makeClient(
                confidential: true,
                authentication: method,
                grantTypes: ["client_credentials"]
            )
            let state = try await ClientCredentialsFlow.authorize(
                configuration: issuer.configuration,
                client: client,
                scopes: []
            )
            #expect(state.refreshToken == nil)
            let session = AuthSession(state: expired(state))
            let renewed = try await session.freshAccessToken()
            #expect(renewed != state.accessToken)
            #expect(try await issuer.counters(of: client)["token_requests", default: 0] == 2)
        }
        let wrongSecret = try await issuer.makeClient(confidential: true, grantTypes: ["client_credentials"])
        let error = await #expect(throws: OAuthError.self) {
            try await ClientCredentialsFlow.authorize(
                configuration: issuer.configuration,
                client: OAuthClient(id: wrongSecret.id, secret: "wrong"),
                scopes: []
            )
        }
        #expect(error?.oauthErrorCode == "invalid_client")
        #expect(error?.message.contains("wrong") == false)
    }

    @Test("revocation: after revoke() the issuer refuses the old refresh token and the session hands out nothing")
    func revocation() async throws {
        let issuer = try await SandboxIssuer.shared()
        let client = try await issuer.makeClient()
        let signedIn = try await issuer.signIn(client)
        let session = AuthSession(state: signedIn)
        try await session.revoke()
        #expect(await session.state.refreshToken == nil)
        #expect(session.cachedToken() == nil)
        let error = await #expect(throws: OAuthError.self) { try await session.freshAccessToken() }
        #expect(error?.kind == .noRefreshToken)
        let old = await #expect(throws: OAuthError.self) {
            try await AuthSession(state: expired(signedIn)).freshAccessToken()
        }
        #expect(old?.oauthErrorCode == "invalid_grant")
        // Unknown tokens revoke fine too (RFC 7009 section 2.2).
        try await TokenRevocation.revoke(
            "never-issued",
            hint: .accessToken,
            configuration: issuer.configuration,
            client: client
        )
    }

    @Test("discovery: OIDC and RFC 8414 documents read; an issuer mismatch and a missing document are clear errors")
    func discovery() async throws {
        let issuer = try await SandboxIssuer.shared()
        let oidc = try await ServiceConfiguration.discover(issuer: issuer.url, using: .openIDConnect)
        let rfc8414 = try await ServiceConfiguration.discover(issuer: issuer.url, using: .oauthAuthorizationServer)
        #expect(oidc == rfc8414)
        #expect(oidc.tokenEndpoint.absoluteString == issuer.url.absoluteString + "/token")
        #expect(oidc.deviceAuthorizationEndpoint != nil && oidc.revocationEndpoint != nil)

        let otherName = URL(string: issuer.url.absoluteString.replacingOccurrences(of: "127.0.0.1", with: "localhost"))!
        let mismatch = await #expect(throws: OAuthError.self) {
            try await ServiceConfiguration.discover(issuer: otherName)
        }
        #expect(mismatch?.kind == .invalidConfiguration)
        #expect(mismatch?.message.contains("is for issuer") == true)

        let missing = await #expect(throws: OAuthError.self) {
            try await ServiceConfiguration.discover(issuer: issuer.url.appendingPathComponent("nowhere"))
        }
        #expect(missing?.kind == .invalidConfiguration)

        let refused = await #expect(throws: OAuthError.self) {
            try await ServiceConfiguration.discover(issuer: URL(string: "http://127.0.0.1:\(Ports.closed())")!)
        }
        #expect(refused?.kind == .transient)
    }

    @Test("authorize(URLRequest): a bearer token for the issuer's userinfo; refused for plain http off loopback")
    func authorizeURLRequest() async throws {
        let issuer = try await SandboxIssuer.shared()
        let session = AuthSession(state: try await issuer.signIn(try await issuer.makeClient()))
        var request = URLRequest(url: try #require(issuer.configuration.userinfoEndpoint))
        try await session.authorize(&request)
        let (body, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: body, as: UTF8.self).contains(issuer.sandbox.user))

        var insecure = URLRequest(url: URL(string: "http://example.com/api")!)
        let error = await #expect(throws: OAuthError.self) { try await session.authorize(&insecure) }
        #expect(error?.kind == .invalidConfiguration)
        #expect(insecure.value(forHTTPHeaderField: "Authorization") == nil)
    }
}

/// Polls `condition` every 50 ms for up to 20 s.
func waitUntil(_ condition: () -> Bool) async throws {
    for _ in 0..<400 {
        if condition() { return }
        try await Task.sleep(for: .milliseconds(50))
    }
    Issue.record("condition not met within 20 s")
}
