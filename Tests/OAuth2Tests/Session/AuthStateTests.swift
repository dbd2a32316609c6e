import AuthRPCSyntax
import Foundation
import Testing

@testable import OAuth2

@Suite("AuthState, tokens and identity (no network)")
struct AuthStateTests {
    static let configuration = ServiceConfiguration(tokenEndpoint: URL(string: "https://issuer.test/token")!)
    static let client = OAuthClient(id: "client-1", secret: "client-secret-value")

    func state(expiresIn: TimeInterval?, lifetime: TimeInterval = 3600) -> AuthState {
        let now = Date()
        return AuthState(
            configuration: Self.configuration,
            client: Self.client,
            scopes: ["a", "b"],
            grant: GrantRecord(type: .deviceCode),
            accessToken: "access-token-value",
            accessTokenExpiresAt: expiresIn.map { now.addingTimeInterval($0) },
            accessTokenIssuedAt: expiresIn.map { now.addingTimeInterval($0 - lifetime) },
            refreshToken: "refresh-token-value"
        )
    }

    @Test("fresh means expiring more than 60 s from now; no expiry means fresh; stale or missing means not fresh")
    func freshness() {
        #expect(state(expiresIn: 61).isAccessTokenFresh())
        #expect(!state(expiresIn: 59).isAccessTokenFresh())
        #expect(!state(expiresIn: -1).isAccessTokenFresh())
        #expect(state(expiresIn: nil).isAccessTokenFresh())
        var stale = state(expiresIn: 3000)
        stale.isAccessTokenStale = true
        #expect(!stale.isAccessTokenFresh())
        var missing = state(expiresIn: 3000)
        missing.accessToken = nil
        #expect(!missing.isAccessTokenFresh())
    }

    @Test("the margin is at most half the token's lifetime, so 30-second tokens are used")
    func shortLifetimeMargin() {
        #expect(state(expiresIn: 20, lifetime: 30).isAccessTokenFresh())
        #expect(!state(expiresIn: 14, lifetime: 30).isAccessTokenFresh())
        #expect(state(expiresIn: 100, lifetime: 120).isAccessTokenFresh())
    }

    @Test("a token response: rotation replaces the refresh token, absence keeps it, scope and stale mark updated")
    func applyResponse() throws {
        var state = state(expiresIn: -10)
        state.isAccessTokenStale = true
        state.authorizationError = AuthorizationErrorRecord(code: "invalid_grant")
        let now = Date()
        state.apply(
            try TokenResponse(
                json: Data(#"{"access_token":"new","expires_in":"120","refresh_token":"rotated","scope":"a"}"#.utf8)
            ),
            receivedAt: now
        )
        #expect(state.accessToken == "new")
        #expect(state.refreshToken == "rotated")
        #expect(state.accessTokenExpiresAt == now.addingTimeInterval(120))
        #expect(state.effectiveScopes == ["a"])
        #expect(!state.isAccessTokenStale && state.authorizationError == nil)
        state.apply(try TokenResponse(json: Data(#"{"access_token":"newer","expires_in":60}"#.utf8)), receivedAt: now)
        #expect(state.refreshToken == "rotated")
        #expect(throws: InvalidTokenResponse.self) { try TokenResponse(json: Data(#"{"token_type":"Bearer"}"#.utf8)) }
        #expect(throws: InvalidTokenResponse.self) { try TokenResponse(json: Data("<html>".utf8)) }
    }

    @Test("JSON round trip keeps every field; the version is written and a newer one is refused")
    func serialization() throws {
        var original = state(expiresIn: 300)
        original.idToken = "h.p.s"
        original.grantedScopes = ["a"]
        original.authorizationError = AuthorizationErrorRecord(code: "invalid_grant", description: "gone")
        let data = try original.encoded()
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains(#""version" : 1"#))
        let decoded = try AuthState(decoding: data)
        #expect(decoded.accessToken == original.accessToken)
        #expect(decoded.refreshToken == original.refreshToken)
        #expect(decoded.client == original.client)
        #expect(decoded.configuration == original.configuration)
        #expect(decoded.grant.type == .deviceCode)
        #expect(decoded.authorizationError?.code == "invalid_grant")
        #expect(abs(decoded.accessTokenExpiresAt!.timeIntervalSince(original.accessTokenExpiresAt!)) < 1)

        let newer = text.replacingOccurrences(of: #""version" : 1"#, with: #""version" : 99"#)
        let error = #expect(throws: OAuthError.self) { try AuthState(decoding: Data(newer.utf8)) }
        #expect(error?.kind == .storage)
        #expect(error?.message.contains("newer version") == true)
        let garbage = #expect(throws: OAuthError.self) { try AuthState(decoding: Data("not json".utf8)) }
        #expect(garbage?.message.contains("not JSON") == true)
        let missing = #expect(throws: OAuthError.self) { try AuthState(decoding: Data(#"{"version":1}"#.utf8)) }
        #expect(missing?.message.contains("missing") == true)
    }

    @Test("grant types are stored by name; a name this version does not know fails to decode as a storage error")
    func grantTypes() throws {
        let types: [(GrantRecord.GrantType, String)] = [
            (.authorizationCode, "authorization_code"), (.deviceCode, "device_code"),
            (.clientCredentials, "client_credentials"), (.refreshTokenImport, "refresh_token_import"),
            (.gtmOAuth2Migration, "gtm_oauth2_migration"),
        ]
        for (type, name) in types {
            #expect(type.rawValue == name && type.description == name)
            #expect(GrantRecord.GrantType(rawValue: name) == type)
            var original = state(expiresIn: 300)
            original.grant = GrantRecord(type: type)
            let text = String(decoding: try original.encoded(), as: UTF8.self)
            #expect(text.contains(#""type" : "\#(name)""#), "\(text)")
            #expect(try AuthState(decoding: Data(text.utf8)).grant.type == type)
        }
        #expect(Set(types.map(\.0)).count == types.count)
        #expect(GrantRecord.GrantType(rawValue: "token_exchange") == nil)

        let text = String(decoding: try state(expiresIn: 300).encoded(), as: UTF8.self)
        let unknown = text.replacingOccurrences(of: #""type" : "device_code""#, with: #""type" : "token_exchange""#)
        #expect(unknown != text)
        let error = #expect(throws: OAuthError.self) { try AuthState(decoding: Data(unknown.utf8)) }
        #expect(error?.kind == .storage)
    }

    @Test("descriptions never show tokens or the client secret")
    func redaction() {
        let state = state(expiresIn: 300)
        for text in [
            state.description, String(describing: state), state.client.description, String(reflecting: state.client),
        ] {
            #expect(!text.contains("access-token-value"))
            #expect(!text.contains("refresh-token-value"))
            #expect(!text.contains("client-secret-value"))
        }
    }

    @Test("ID token claims: sub, email, email_verified as a bool or a string; garbage is nil")
    func idTokenClaims() {
        func jwt(_ json: String) -> String { "e30." + Base64URL.encode(Array(json.utf8)) + ".sig" }
        let claims = IDTokenClaims(jwt: jwt(#"{"sub":"42","email":"a@b.c","email_verified":true}"#))
        #expect(claims?.subject == "42")
        #expect(claims?.email == "a@b.c")
        #expect(claims?.emailVerified == true)
        #expect(IDTokenClaims(jwt: jwt(#"{"email_verified":"true"}"#))?.emailVerified == true)
        #expect(IDTokenClaims(jwt: jwt(#"{"email_verified":"false"}"#))?.emailVerified == false)
        #expect(IDTokenClaims(jwt: "not-a-jwt") == nil)
        #expect(IDTokenClaims(jwt: "a.!!!.c") == nil)
    }

    @Test("discovery URLs: OIDC appends, RFC 8414 inserts before the issuer's path")
    func discoveryURLs() {
        let issuer = URL(string: "https://example.com/tenant/a")!
        #expect(
            ServiceConfiguration.discoveryURL(issuer: issuer, document: .openIDConnect).absoluteString
                == "https://example.com/tenant/a/.well-known/openid-configuration"
        )
        #expect(
            ServiceConfiguration.discoveryURL(issuer: issuer, document: .oauthAuthorizationServer).absoluteString
                == "https://example.com/.well-known/oauth-authorization-server/tenant/a"
        )
        #expect(
            ServiceConfiguration.discoveryURL(issuer: URL(string: "https://example.com/")!, document: .openIDConnect)
                .absoluteString
                == "https://example.com/.well-known/openid-configuration"
        )
    }

    @Test("OAuth errors classify: only transient ones are transient; authorization ones need a new sign-in")
    func classification() {
        #expect(OAuthError(.transient, "x").isTransient)
        #expect(!OAuthError(.authorization, "x", oauthErrorCode: "invalid_grant").isTransient)
        #expect(OAuthError(.authorization, "x", oauthErrorCode: "invalid_grant").requiresReauthorization)
        #expect(OAuthError(.noRefreshToken, "x").requiresReauthorization)
        #expect(!OAuthError(.storage, "x").requiresReauthorization)
    }
}

@Suite("PKCE")
struct PKCETests {
    @Test("RFC 7636 appendix B: the S256 challenge of its verifier")
    func rfc7636Example() throws {
        #expect(
            try PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk").challenge
                == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        )
    }

    @Test("verifiers are 43-128 unreserved characters and differ every time")
    func verifiers() throws {
        let a = try PKCE()
        let b = try PKCE()
        #expect(a.verifier != b.verifier)
        #expect((43...128).contains(a.verifier.count))
        #expect(a.verifier.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-._~".contains($0)) })
        #expect(a.method == "S256")
    }
}
