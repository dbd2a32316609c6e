import Foundation
import Testing

@testable import OAuth2

/// The pure, package-level parsers for everything OAuth2 reads from the network or disk, as the
/// fuzzers call them: each takes bytes (or text) and returns a value or a clear error, never traps.
@Suite("OAuth2 parser entry points")
struct ParserEntryPointTests {
    @Test("JSON numbers: numbers and decimal strings; booleans, NaN and hex are not numbers")
    func jsonNumbers() {
        #expect(JSONNumber.value(of: NSNumber(value: 3600)) == 3600)
        #expect(JSONNumber.value(of: "1.5e2") == 150)
        #expect(JSONNumber.value(of: "1e400") == .infinity)
        for notANumber: Any in ["NaN", "inf", "0x10", " 5", "", "1.", ".5", "--1", String(repeating: "9", count: 65)] {
            #expect(JSONNumber.value(of: notANumber) == nil, "\(notANumber)")
        }
        let boolean = try? JSONSerialization.jsonObject(with: Data(#"{"b":true}"#.utf8)) as? [String: Any]
        #expect(JSONNumber.value(of: boolean?["b"]) == nil)
    }

    @Test("token syntax: b64token, VSCHAR refresh tokens, scope tokens, error codes")
    func tokenSyntax() {
        #expect(TokenSyntax.isBearerToken("ya29.a0-_~+/x=="))
        for bad in ["", "a b", "a=b", "==", "é", "a\r\n", String(repeating: "a", count: 16 * 1024 + 1)] {
            #expect(!TokenSyntax.isBearerToken(bad), "\(bad.prefix(10).debugDescription)")
        }
        #expect(TokenSyntax.isRefreshToken("1//0g a~b"))
        #expect(!TokenSyntax.isRefreshToken("a\nb"))
        #expect(TokenSyntax.scopeTokens("  openid   email ") == ["openid", "email"])
        #expect(TokenSyntax.scopeTokens("") == [])
        #expect(TokenSyntax.scopeTokens("a\\b") == nil)
        #expect(TokenSyntax.isErrorCode("invalid_grant"))
        #expect(!TokenSyntax.isErrorCode("bad\"code"))
    }

    @Test("OAuth error answers: a well-formed code, a description cut to 200 characters")
    func errorResponses() throws {
        let long = String(repeating: "d", count: 5000)
        let error = try #require(
            OAuthErrorResponse(json: Data(#"{"error":"invalid_grant","error_description":"\#(long)"}"#.utf8))
        )
        #expect(error.code == "invalid_grant")
        #expect(error.description?.count == 201)
        #expect(OAuthErrorResponse(json: Data(#"{"error":"bad\u0001code"}"#.utf8)) == nil)
        #expect(OAuthErrorResponse(json: Data(#"{"error":5}"#.utf8)) == nil)
        #expect(OAuthErrorResponse(json: Data("[1]".utf8)) == nil)
    }

    @Test("device authorization answers parse with clamps; missing fields are named")
    func deviceAuthorization() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let parsed = try DeviceAuthorizationFlow.Authorization(
            parsing: Data(
                #"{"device_code":"d","user_code":"U","verification_url":"https://g.co/device","interval":1e300,"expires_in":-5}"#
                    .utf8
            ),
            receivedAt: now
        )
        #expect(parsed.interval == .seconds(60))
        #expect(parsed.expiresAt == now.addingTimeInterval(1))
        #expect(parsed.verificationURI.absoluteString == "https://g.co/device")
        let missing = #expect(throws: OAuthError.self) {
            try DeviceAuthorizationFlow.Authorization(
                parsing: Data(#"{"device_code":"d","verification_uri":"https://x"}"#.utf8),
                receivedAt: now
            )
        }
        #expect(missing?.message.contains("user_code") == true)
    }

    @Test("discovery documents: endpoints must be https off loopback; the issuer must match")
    func discoveryDocuments() throws {
        let issuer = URL(string: "https://issuer.example")!
        let document =
            #"{"issuer":"https://issuer.example/","token_endpoint":"https://issuer.example/token","revocation_endpoint":"http://127.0.0.1:9/revoke"}"#
        let configuration = try ServiceConfiguration(discoveryDocument: Data(document.utf8), issuer: issuer)
        #expect(configuration.tokenEndpoint.absoluteString == "https://issuer.example/token")
        #expect(configuration.revocationEndpoint?.host == "127.0.0.1")
        let insecure = #expect(throws: OAuthError.self) {
            try ServiceConfiguration(
                discoveryDocument: Data(
                    #"{"issuer":"https://issuer.example","token_endpoint":"http://issuer.example/token"}"#.utf8
                ),
                issuer: issuer
            )
        }
        #expect(insecure?.message.contains("token_endpoint") == true)
        let other = #expect(throws: OAuthError.self) {
            try ServiceConfiguration(
                discoveryDocument: Data(
                    #"{"issuer":"https://\#(String(repeating: "e", count: 5000))","token_endpoint":"https://x/t"}"#.utf8
                ),
                issuer: issuer
            )
        }
        #expect((other?.message.count ?? .max) < 400)
    }

    @Test("endpoint security: https anywhere, http on loopback only")
    func endpointSecurity() {
        for allowed in [
            "https://a.example/t", "http://127.0.0.1:8/t", "http://127.255.0.9/t", "http://[::1]:8/t",
            "http://LOCALHOST/t",
        ] {
            #expect(EndpointSecurity.allows(URL(string: allowed)!), "\(allowed)")
        }
        for refused in [
            "http://a.example/t", "http://127.1/t", "http://127.0.0.1.evil.example/t", "http://[::ffff:127.0.0.1]/t",
            "ftp://a.example/t", "file:///etc/passwd", "http://128.0.0.1/t", "http://127.0.0.256/t",
        ] {
            #expect(!EndpointSecurity.allows(URL(string: refused)!), "\(refused)")
        }
    }

    @Test("ID token claims: bounded in size")
    func idTokenClaims() {
        #expect(IDTokenClaims(jwt: "e30." + String(repeating: "a", count: 70_000) + ".s") == nil)
    }
}
