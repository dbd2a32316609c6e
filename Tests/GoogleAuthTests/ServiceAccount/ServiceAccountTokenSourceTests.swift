import AuthRPC
import AuthRPCSystem
import Foundation
import GoogleAuth
import OAuth2
import OAuth2TestSupport
import TestSupport
import Testing

@Suite("Service accounts: the JWT bearer grant at the key's token_uri")
struct ServiceAccountTokenSourceTests {
    let scope = ServiceConfiguration.googleTestScope

    @Test("the granted token calls the grpcio service as the service account, with the scope asked for")
    func tokenCallsAsTheServiceAccount() async throws {
        let google = try await GoogleSandbox.shared()
        let key = try ServiceAccountKey(contentsOfFile: google.serviceAccountKeyPath)
        let source = try ServiceAccountTokenSource(key: key, scopes: [scope])
        let token = try await source.fetchToken()
        #expect(token.tokenType == "Bearer")
        #expect(token.lifetime == .seconds(3600))
        #expect(token.grantedScopes == [scope])
        let caller = try await google.whoAmI(token: token.accessToken)
        #expect(caller.user == google.serviceAccountEmail)
        #expect(caller.scope == scope)
        #expect(source.identity.principal == google.serviceAccountEmail)
    }

    @Test("one fetch is one request to the token endpoint, counted under the account")
    func oneFetchOneRequest() async throws {
        let google = try await GoogleSandbox.shared()
        let key = try ServiceAccountKey(json: try await google.newServiceAccountKey())
        let source = try ServiceAccountTokenSource(key: key, scopes: [scope])
        _ = try await source.fetchToken()
        _ = try await source.fetchToken()
        #expect(try await google.issuerCounters(of: key.clientEmail)["jwt_bearer_requests"] == 2)
    }

    @Test("with a subject (domain-wide delegation) the token acts for that user")
    func subject() async throws {
        let google = try await GoogleSandbox.shared()
        let key = try ServiceAccountKey(contentsOfFile: google.serviceAccountKeyPath)
        let source = try ServiceAccountTokenSource(key: key, scopes: [scope], subject: google.sandbox.user)
        let token = try await source.fetchToken()
        #expect(try await google.whoAmI(token: token.accessToken).user == google.sandbox.user)
    }

    @Test(
        "the assertion: RS256, kid = private_key_id, iss = client_email, aud = token_uri, scope, an hour's lifetime, sub when asked"
    )
    func assertionShape() async throws {
        let google = try await GoogleSandbox.shared()
        let key = try ServiceAccountKey(contentsOfFile: google.serviceAccountKeyPath)
        let recorder = RecordingTransport()
        let source = try ServiceAccountTokenSource(
            key: key,
            scopes: [scope, "openid"],
            subject: "someone@example.com",
            transport: recorder
        )
        _ = try? await source.fetchToken()
        let form = try #require(recorder.lastForm)
        #expect(form.map(\.0) == ["grant_type", "assertion"])
        #expect(form.first?.1 == "urn:ietf:params:oauth:grant-type:jwt-bearer")
        let assertion = try #require(form.last?.1)
        let header = jwtPart(assertion, 0)
        let claims = jwtPart(assertion, 1)
        #expect(header as NSDictionary == ["alg": "RS256", "kid": key.privateKeyID!, "typ": "JWT"] as NSDictionary)
        #expect(claims["iss"] as? String == google.serviceAccountEmail)
        #expect(claims["aud"] as? String == google.tokenEndpoint.absoluteString)
        #expect(claims["scope"] as? String == "\(scope) openid")
        #expect(claims["sub"] as? String == "someone@example.com")
        let iat = try #require(claims["iat"] as? Int)
        let exp = try #require(claims["exp"] as? Int)
        #expect(exp - iat == 3600)
        #expect(abs(Double(iat) - Date().timeIntervalSince1970) < 300)
        #expect(!assertion.contains("="), "base64url without padding")
        // google-auth verifies the signature with the certificate Google would publish.
        let verified = try await GoogleAuthReference.verifyJWT(
            assertion,
            certificatePath: google.serviceAccountCertificatePath,
            audience: google.tokenEndpoint.absoluteString
        )
        #expect((verified["claims"] as? [String: Any])?["iss"] as? String == google.serviceAccountEmail)
    }

    @Test("a refused assertion is an authorization error with the server's reason; no assertion in it")
    func refused() async throws {
        let google = try await GoogleSandbox.shared()
        let key = try ServiceAccountKey(contentsOfFile: google.serviceAccountKeyPath)
        let source = try ServiceAccountTokenSource(key: key, scopes: [scope], subject: "stranger@example.com")
        let error = try await #require(throws: OAuthError.self) { try await source.fetchToken() }
        #expect(error.oauthErrorCode == "invalid_grant")
        #expect(error.requiresReauthorization)
        #expect(error.message.contains("Invalid 'sub' value"))
        #expect(!error.message.contains("eyJ"))
    }

    @Test("a key of an account the issuer does not know is refused with invalid_grant")
    func unknownAccount() async throws {
        let google = try await GoogleSandbox.shared()
        let json = try Data(contentsOf: URL(fileURLWithPath: google.serviceAccountKeyPath))
            .editingJSON(["client_email": "nobody@sandbox-project.iam.gserviceaccount.com"])
        let source = try ServiceAccountTokenSource(key: ServiceAccountKey(json: json), scopes: [scope])
        let error = try await #require(throws: OAuthError.self) { try await source.fetchToken() }
        #expect(error.oauthErrorCode == "invalid_grant")
    }

    @Test("a token endpoint that cannot be reached is a transient error")
    func unreachable() async throws {
        let google = try await GoogleSandbox.shared()
        let closed = Ports.closed()
        let json = try Data(contentsOf: URL(fileURLWithPath: google.serviceAccountKeyPath))
            .editingJSON(["token_uri": "http://127.0.0.1:\(closed)/token"])
        let source = try ServiceAccountTokenSource(key: ServiceAccountKey(json: json), scopes: [scope])
        let error = try await #require(throws: OAuthError.self) { try await source.fetchToken() }
        #expect(error.isTransient)
        #expect(error.message.contains("127.0.0.1:\(closed)/token"))
    }

    @Test("no scopes, an empty scope or a blank subject are refused before anything is signed")
    func badArguments() async throws {
        let google = try await GoogleSandbox.shared()
        let key = try ServiceAccountKey(contentsOfFile: google.serviceAccountKeyPath)
        #expect(throws: OAuthError.self) { try ServiceAccountTokenSource(key: key, scopes: []) }
        #expect(throws: OAuthError.self) { try ServiceAccountTokenSource(key: key, scopes: ["a b"]) }
        #expect(throws: OAuthError.self) { try ServiceAccountTokenSource(key: key, scopes: [scope], subject: " ") }
    }
}
