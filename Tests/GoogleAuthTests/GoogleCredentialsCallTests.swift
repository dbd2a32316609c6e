import AuthRPC
import AuthSampleService
import Foundation
import GoogleAuth
import OAuth2
import TestSupport
import Testing

/// Each kind of Google credential, as `CallOptions.authTokenProvider`, calls the grpcio test
/// service, which says who called; a fresh token is reused, not asked for again.
@Suite("GoogleCredentials: every kind calls the service through the token provider slot")
struct GoogleCredentialsCallTests {
    let scope = ServiceConfiguration.googleTestScope

    @Test(
        "service account (JWT bearer grant): the server sees the account and the scope; three calls, one token request"
    )
    func serviceAccount() async throws {
        let google = try await GoogleSandbox.shared()
        let key = try ServiceAccountKey(json: try await google.newServiceAccountKey())
        let credentials = try GoogleCredentials(source: ServiceAccountTokenSource(key: key, scopes: [scope]))
        for _ in 0..<3 {
            let response = try await google.call(credentials).message
            #expect(response.username == key.clientEmail)
            #expect(response.oauthScope == scope)
        }
        #expect(try await google.issuerCounters(of: key.clientEmail)["jwt_bearer_requests"] == 1)
        #expect(credentials.identity == key.identity)
        #expect(credentials.requestMetadata.isEmpty)
    }

    @Test("service account with a subject: the server sees the user it acts for")
    func serviceAccountActingForAUser() async throws {
        let google = try await GoogleSandbox.shared()
        let key = try ServiceAccountKey(contentsOfFile: google.serviceAccountKeyPath)
        let credentials = try GoogleCredentials(
            source: ServiceAccountTokenSource(key: key, scopes: [scope], subject: google.sandbox.user)
        )
        #expect(try await google.call(credentials).message.username == google.sandbox.user)
    }

    @Test("self-signed JWTs: the server sees the account, with no scope; with scopes, the scope claim")
    func selfSignedJWT() async throws {
        let google = try await GoogleSandbox.shared()
        let key = try ServiceAccountKey(json: try await google.newServiceAccountKey())
        let perService = try GoogleCredentials(selfSignedJWTsFor: key)
        for _ in 0..<3 {
            let response = try await google.call(perService).message
            #expect(response.username == key.clientEmail)
            #expect(response.oauthScope == "")
        }
        let scoped = try GoogleCredentials(selfSignedJWTsFor: key, scopes: [scope])
        let response = try await google.call(scoped).message
        #expect((response.username, response.oauthScope) == (key.clientEmail, scope))
        let counters = try await google.issuerCounters(of: key.clientEmail)
        #expect(counters["jwt_access_tokens"] == 2, "\(counters)")
        #expect(counters["jwt_bearer_requests"] == nil, "no token endpoint was asked: \(counters)")
    }

    @Test("authorized user: the server sees the user; three calls, one refresh")
    func authorizedUser() async throws {
        let google = try await GoogleSandbox.shared()
        let user = try AuthorizedUserCredentials(json: try await google.newAuthorizedUser())
        let credentials = try GoogleCredentials(
            source: AuthorizedUserTokenSource(credentials: user, tokenEndpoint: google.tokenEndpoint)
        )
        for _ in 0..<3 {
            #expect(try await google.call(credentials).message.username == google.sandbox.user)
        }
        #expect(try await google.issuerCounters(of: user.clientID)["refresh_requests"] == 1)
    }

    @Test("Compute Engine: the server sees the instance's account")
    func computeEngine() async throws {
        let google = try await GoogleSandbox.shared()
        let credentials = try GoogleCredentials(source: ComputeEngineTokenSource(host: google.metadataHost))
        let response = try await google.call(credentials).message
        #expect(response.username == google.metadataEmail)
        #expect(response.oauthScope.split(separator: " ").contains(Substring(scope)))
    }

    @Test("Application Default Credentials, each kind: the provider calls as the principal found")
    func applicationDefault() async throws {
        let google = try await GoogleSandbox.shared()
        let scratch = try ScratchDirectory()
        let cases: [([String: String], [String], GoogleCredentialIdentity.Kind, String, String)] = [
            (
                ["GOOGLE_APPLICATION_CREDENTIALS": google.serviceAccountKeyPath], [scope], .serviceAccount,
                google.serviceAccountEmail, scope
            ),
            (
                ["GOOGLE_APPLICATION_CREDENTIALS": google.serviceAccountKeyPath], [], .serviceAccount,
                google.serviceAccountEmail, ""
            ),
            (
                ["GOOGLE_APPLICATION_CREDENTIALS": google.authorizedUserPath], [scope], .authorizedUser,
                google.sandbox.user, "openid email \(scope)"
            ),
            (["GCE_METADATA_HOST": google.metadataHost], [scope], .computeEngine, google.metadataEmail, scope),
        ]
        for (variables, scopes, kind, caller, grantedScope) in cases {
            let environment = ApplicationDefaultCredentials.Environment(
                variables: variables.merging(["HOME": scratch.path]) { $1 },
                productNamePath: scratch.url.appendingPathComponent("none").path
            )
            let credentials = try GoogleCredentials.applicationDefault(
                scopes: scopes,
                environment: environment,
                userTokenEndpoint: google.tokenEndpoint
            )
            #expect(credentials.identity.kind == kind)
            let response = try await google.call(credentials).message
            #expect(response.username == caller, "\(credentials)")
            #expect(response.oauthScope == grantedScope, "\(credentials)")
        }
    }

    @Test(
        "a self-signed JWT the provider sent is one google-auth verifies (iss = sub = the account, the lifetime asked for)"
    )
    func providerTokensAreGoogles() async throws {
        let google = try await GoogleSandbox.shared()
        let key = try ServiceAccountKey(contentsOfFile: google.serviceAccountKeyPath)
        let credentials = try GoogleCredentials(selfSignedJWTsFor: key, lifetime: .seconds(1200))
        _ = try await google.call(credentials)
        let context = AuthTokenContext(
            authority: google.authority,
            method: MethodDescriptor(service: "grpc.testing.TestService", method: "UnaryCall")
        )
        let jwt = try #require(credentials.cachedToken(for: context))
        let verified = try await GoogleAuthReference.verifyJWT(
            jwt,
            certificatePath: google.serviceAccountCertificatePath,
            audience: "https://localhost/"
        )
        let claims = try #require(verified["claims"] as? [String: Any])
        #expect(claims["iss"] as? String == key.clientEmail && claims["sub"] as? String == key.clientEmail)
        let iat = try #require(claims["iat"] as? Int)
        let exp = try #require(claims["exp"] as? Int)
        #expect(exp - iat == 1200)
    }
}
