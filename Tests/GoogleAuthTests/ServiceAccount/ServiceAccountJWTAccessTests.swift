import AuthRPC
import Foundation
import GoogleAuth
import OAuth2
import TestSupport
import Testing

@Suite("Service accounts: self-signed JWTs for a service, no token endpoint")
struct ServiceAccountJWTAccessTests {
    @Test("the audience of a call's authority is https://<host>/: port dropped, case folded, IPv6 bracketed")
    func audienceFromAuthority() throws {
        let cases: [(String, String)] = [
            ("pubsub.googleapis.com", "https://pubsub.googleapis.com/"),
            ("pubsub.googleapis.com:443", "https://pubsub.googleapis.com/"),
            ("LocalHost:8443", "https://localhost/"),
            ("127.0.0.1:50051", "https://127.0.0.1/"),
            ("[::1]:443", "https://[::1]/"),
            ("[2001:db8::1]", "https://[2001:db8::1]/"),
        ]
        for (authority, audience) in cases {
            #expect(try ServiceAccountJWTAccessSource.Audience.forAuthority(authority).audienceClaim == audience)
        }
        for bad in ["", "host:", "host:99999", "user@host", "host/path", "host name", "[::1", "[::1]x", "::1"] {
            #expect(throws: OAuthError.self, "\(bad)") { try ServiceAccountJWTAccessSource.Audience.forAuthority(bad) }
        }
    }

    @Test("a JWT for the channel's authority calls the grpcio service as the service account")
    func callsAsTheServiceAccount() async throws {
        let google = try await GoogleSandbox.shared()
        let key = try ServiceAccountKey(contentsOfFile: google.serviceAccountKeyPath)
        let source = try ServiceAccountJWTAccessSource(key: key, audience: .forAuthority(google.authority))
        let token = try await source.fetchToken()
        #expect(token.lifetime == .seconds(3600))
        let caller = try await google.whoAmI(token: token.accessToken)
        #expect(caller.user == google.serviceAccountEmail)
        #expect(caller.scope == "")
    }

    @Test("a JWT with a scope claim and no audience is accepted, with that scope")
    func scopeClaim() async throws {
        let google = try await GoogleSandbox.shared()
        let key = try ServiceAccountKey(contentsOfFile: google.serviceAccountKeyPath)
        let source = try ServiceAccountJWTAccessSource(
            key: key,
            audience: .scopes([ServiceConfiguration.googleTestScope])
        )
        let token = try await source.fetchToken()
        #expect(jwtPart(token.accessToken, 1)["aud"] == nil)
        let caller = try await google.whoAmI(token: token.accessToken)
        #expect(caller == (google.serviceAccountEmail, ServiceConfiguration.googleTestScope))
    }

    @Test("a JWT for another host is refused by the service (UNAUTHENTICATED)")
    func wrongAudience() async throws {
        let google = try await GoogleSandbox.shared()
        let key = try ServiceAccountKey(contentsOfFile: google.serviceAccountKeyPath)
        let token = try await ServiceAccountJWTAccessSource(key: key, audience: .forAuthority("pubsub.googleapis.com"))
            .fetchToken()
        let error = try await #require(throws: RPCError.self) { try await google.whoAmI(token: token.accessToken) }
        #expect(error.code == .unauthenticated)
    }

    @Test("google-auth verifies our JWT with the key's certificate: header, iss = sub, aud, iat/exp")
    func googleAuthVerifies() async throws {
        let google = try await GoogleSandbox.shared()
        let key = try ServiceAccountKey(contentsOfFile: google.serviceAccountKeyPath)
        let token = try await ServiceAccountJWTAccessSource(
            key: key,
            audience: .forAuthority(google.authority),
            lifetime: .seconds(600)
        ).fetchToken()
        let verified = try await GoogleAuthReference.verifyJWT(
            token.accessToken,
            certificatePath: google.serviceAccountCertificatePath,
            audience: "https://localhost/"
        )
        let header = try #require(verified["header"] as? [String: Any])
        let claims = try #require(verified["claims"] as? [String: Any])
        #expect(header as NSDictionary == ["alg": "RS256", "kid": key.privateKeyID!, "typ": "JWT"] as NSDictionary)
        #expect(claims["iss"] as? String == google.serviceAccountEmail)
        #expect(claims["sub"] as? String == google.serviceAccountEmail)
        #expect(claims["aud"] as? String == "https://localhost/")
        let iat = try #require(claims["iat"] as? Int)
        let exp = try #require(claims["exp"] as? Int)
        #expect(exp - iat == 600)
        #expect(Date(timeIntervalSince1970: TimeInterval(iat)) == token.receivedAt)
        // And refuses it for another audience, so the check above could fail.
        await #expect(throws: PeerError.self) {
            try await GoogleAuthReference.verifyJWT(
                token.accessToken,
                certificatePath: google.serviceAccountCertificatePath,
                audience: "https://example.com/"
            )
        }
    }

    @Test("lifetimes outside 1 s...1 h, empty scopes and bad hosts are refused")
    func badArguments() async throws {
        let google = try await GoogleSandbox.shared()
        let key = try ServiceAccountKey(contentsOfFile: google.serviceAccountKeyPath)
        #expect(throws: OAuthError.self) {
            try ServiceAccountJWTAccessSource(key: key, audience: .service(host: "a.b"), lifetime: .seconds(3601))
        }
        #expect(throws: OAuthError.self) {
            try ServiceAccountJWTAccessSource(key: key, audience: .service(host: "a.b"), lifetime: .zero)
        }
        #expect(throws: OAuthError.self) { try ServiceAccountJWTAccessSource(key: key, audience: .scopes([])) }
        #expect(throws: OAuthError.self) {
            try ServiceAccountJWTAccessSource(key: key, audience: .service(host: "a.b/c"))
        }
    }
}
