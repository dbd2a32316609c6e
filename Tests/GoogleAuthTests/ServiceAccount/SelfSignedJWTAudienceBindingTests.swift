import AuthRPC
import AuthSampleService
import Foundation
import GoogleAuth
import OAuth2
import TestSupport
import Testing

/// A self-signed JWT's audience comes from the call's authority, so the authority must be a name
/// the server proved it holds: on the sandbox's TLS channel (certificate for localhost,
/// alias.sandbox.test, 127.0.0.1 and ::1), a foreign authority fails before any JWT is minted,
/// and a second name the certificate covers gets a JWT for that name, which the grpcio service
/// accepts.
@Suite("Self-signed JWTs are minted only for names the server's certificate covers")
struct SelfSignedJWTAudienceBindingTests {
    static func context(_ authority: String) -> AuthTokenContext {
        AuthTokenContext(
            authority: authority,
            method: MethodDescriptor(service: "grpc.testing.TestService", method: "UnaryCall")
        )
    }

    @Test("a foreign authority (storage.googleapis.com) fails unauthenticated and mints no JWT")
    func foreignAuthority() async throws {
        let google = try await GoogleSandbox.shared()
        let key = try ServiceAccountKey(json: try await google.newServiceAccountKey())
        let credentials = try GoogleCredentials(selfSignedJWTsFor: key)
        let error = await #expect(throws: RPCError.self) {
            try await google.call(credentials, authority: "storage.googleapis.com")
        }
        #expect(error?.code == .unauthenticated)
        #expect(error?.message.contains("storage.googleapis.com") == true)
        #expect(credentials.cachedToken(for: Self.context("storage.googleapis.com")) == nil, "no JWT was minted")
        let counters = try await google.issuerCounters(of: key.clientEmail)
        #expect(counters["jwt_access_tokens"] == nil, "\(counters)")
    }

    @Test("a second name the certificate covers works: the JWT's audience is that name")
    func virtualHost() async throws {
        let google = try await GoogleSandbox.shared()
        let alias = try #require(google.sandbox.serverAliases.first)
        let key = try ServiceAccountKey(json: try await google.newServiceAccountKey())
        let credentials = try GoogleCredentials(selfSignedJWTsFor: key)
        let response = try await google.call(credentials, authority: "\(alias):\(google.sandbox.tlsPort)")
        #expect(response.message.username == key.clientEmail)
        let counters = try await google.issuerCounters(of: key.clientEmail)
        #expect(counters["jwt_access_tokens https://\(alias)/"] == 1, "\(counters)")
        #expect(counters["jwt_access_tokens"] == 1, "\(counters)")
    }
}
