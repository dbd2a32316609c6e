import AuthRPC
import AuthRPCSystem
import AuthSampleService
import Foundation
import GoogleAuth
import OAuth2
import TestSupport
import Testing

/// Impersonation against the sandbox's IAM Credentials emulator (Python), which checks the
/// caller's token, each link of the chain and the lifetime; the grpcio service says who called.
@Suite("Impersonated service accounts: generateAccessToken at the IAM Credentials emulator")
struct ImpersonationTests {
    /// A key-backed source credential asking for cloud-platform, as impersonation needs.
    private func keySource(_ google: GoogleSandbox) throws -> GoogleCredentials {
        let key = try ServiceAccountKey(contentsOfFile: google.serviceAccountKeyPath)
        return try GoogleCredentials(
            source: ServiceAccountTokenSource(key: key, scopes: [ImpersonatedServiceAccountCredentials.sourceScope])
        )
    }

    /// The generateAccessToken requests the emulator received asking for `lifetime` (each test
    /// asks for its own, since suites run in parallel against one emulator).
    private func requests(_ google: GoogleSandbox, lifetime: String) async throws -> [[String: Any]] {
        try await google.iamRequests().filter { ($0["body"] as? [String: Any])?["lifetime"] as? String == lifetime }
    }

    @Test("the impersonated token calls the service as the target; the request carries delegates, scope and lifetime")
    func impersonatedCall() async throws {
        let google = try await GoogleSandbox.shared()
        let credentials = try GoogleCredentials(
            source: ImpersonatedTokenSource(
                source: keySource(google),
                targetPrincipal: google.impersonationTarget,
                scopes: [google.sandbox.scope],
                lifetime: .seconds(1201),
                endpoint: google.iamURL(google.impersonationTarget, "generateAccessToken")
            )
        )
        #expect(credentials.identity.kind == .impersonatedServiceAccount)
        #expect(credentials.identity.chain == [google.serviceAccountEmail, google.impersonationTarget])
        let response = try await google.call(credentials)
        #expect(response.message.username == google.impersonationTarget)
        let sent = try await requests(google, lifetime: "1201s")
        #expect(sent.count == 1)
        #expect(sent.first?["caller"] as? String == google.serviceAccountEmail)
        #expect(sent.first?["content_type"] as? String == "application/json")
        let body = try #require(sent.first?["body"] as? [String: Any])
        #expect(body["delegates"] as? [String] == [])
        #expect(body["scope"] as? [String] == [google.sandbox.scope])
        #expect(body["lifetime"] as? String == "1201s")
    }

    @Test("a delegation chain: the delegate goes as projects/-/serviceAccounts/EMAIL; a broken link is refused 403")
    func chain() async throws {
        let google = try await GoogleSandbox.shared()
        let through = try GoogleCredentials(
            source: ImpersonatedTokenSource(
                source: keySource(google),
                targetPrincipal: google.impersonationTarget,
                delegates: [google.impersonationDelegate],
                scopes: [google.sandbox.scope],
                lifetime: .seconds(1301),
                endpoint: google.iamURL(google.impersonationTarget, "generateAccessToken")
            )
        )
        #expect(
            through.identity.chain == [
                google.serviceAccountEmail, google.impersonationDelegate, google.impersonationTarget,
            ]
        )
        #expect(try await google.call(through).message.username == google.impersonationTarget)
        let body = try #require(try await requests(google, lifetime: "1301s").first?["body"] as? [String: Any])
        #expect(body["delegates"] as? [String] == ["projects/-/serviceAccounts/\(google.impersonationDelegate)"])

        let source = try keySource(google)
        let forbidden = try ImpersonatedTokenSource(
            source: source,
            targetPrincipal: google.impersonationForbidden,
            scopes: [google.sandbox.scope],
            endpoint: google.iamURL(google.impersonationForbidden, "generateAccessToken")
        )
        let refused = try await #require(throws: OAuthError.self) { try await forbidden.fetchToken() }
        #expect(refused.kind == .authorization)
        #expect(refused.oauthErrorCode == "PERMISSION_DENIED")
        #expect(refused.message.contains("HTTP 403"))
        let sourceToken = try await source.freshAccessToken()
        #expect(!refused.message.contains(sourceToken))
        // Through the provider, the call fails UNAUTHENTICATED before reaching the service.
        let call = try await #require(throws: RPCError.self) {
            try await google.call(GoogleCredentials(source: forbidden))
        }
        #expect(call.code == .unauthenticated)
    }

    @Test("the IAM emulator refuses a source token it did not issue (401), and the source token is invalidated")
    func badSourceToken() async throws {
        let google = try await GoogleSandbox.shared()
        let source = StaticProvider(token: "not-an-issued-token")
        let impersonated = try ImpersonatedTokenSource(
            source: source,
            targetPrincipal: google.impersonationTarget,
            scopes: [google.sandbox.scope],
            endpoint: google.iamURL(google.impersonationTarget, "generateAccessToken")
        )
        let refused = try await #require(throws: OAuthError.self) { try await impersonated.fetchToken() }
        #expect(refused.kind == .authorization)
        #expect(refused.oauthErrorCode == "UNAUTHENTICATED")
        #expect(!refused.message.contains("not-an-issued-token"))
        #expect(source.invalidated.withLock { $0 } == ["not-an-issued-token"])
    }

    @Test("30 concurrent calls share one impersonated token: one generateAccessToken request")
    func sharedEngine() async throws {
        let google = try await GoogleSandbox.shared()
        let credentials = try GoogleCredentials(
            source: ImpersonatedTokenSource(
                source: keySource(google),
                targetPrincipal: google.impersonationTarget,
                scopes: [google.sandbox.scope],
                lifetime: .seconds(1777),
                endpoint: google.iamURL(google.impersonationTarget, "generateAccessToken")
            )
        )
        let users = try await google.concurrentCalls(30, credentials)
        #expect(users == Array(repeating: google.impersonationTarget, count: 30))
        let mine = try await google.iamRequests().filter {
            ($0["body"] as? [String: Any])?["lifetime"] as? String == "1777s"
        }
        #expect(mine.count == 1)
    }

    @Test("ADC reads gcloud's impersonated_service_account file (authorized_user source) and calls as the target")
    func applicationDefault() async throws {
        let google = try await GoogleSandbox.shared()
        let environment = ApplicationDefaultCredentials.Environment(
            variables: ["GOOGLE_APPLICATION_CREDENTIALS": google.impersonatedADCFile],
            productNamePath: "/nonexistent"
        )
        let resolved = try ApplicationDefaultCredentials.resolve(in: environment)
        let impersonation = try #require(resolved.credential.impersonatedServiceAccount)
        #expect(impersonation.targetPrincipal == google.impersonationTarget)
        #expect(impersonation.sourceCredential.authorizedUserCredentials != nil)
        #expect(resolved.identity.kind == .impersonatedServiceAccount)
        #expect(resolved.identity.principal == google.impersonationTarget)
        #expect(resolved.identity.chain.last == google.impersonationTarget)
        let credentials = try GoogleCredentials(
            resolved,
            scopes: [google.sandbox.scope],
            userTokenEndpoint: google.tokenEndpoint
        )
        #expect(try await google.call(credentials).message.username == google.impersonationTarget)
    }

    @Test("google-auth and this package send the same generateAccessToken request (path, type, caller, body)")
    func sameRequestAsGoogleAuth() async throws {
        let google = try await GoogleSandbox.shared()
        let delegate = "projects/-/serviceAccounts/\(google.impersonationDelegate)"
        _ = try await GoogleAuthReference.impersonate(
            iamEndpoint: google.iamEndpoint,
            sourceKey: google.serviceAccountKeyPath,
            target: google.impersonationTarget,
            delegates: [delegate],
            scope: google.sandbox.scope,
            lifetime: 900
        )
        let ours = try ImpersonatedTokenSource(
            source: keySource(google),
            targetPrincipal: google.impersonationTarget,
            delegates: [delegate],
            scopes: [google.sandbox.scope],
            lifetime: .seconds(900),
            endpoint: google.iamURL(google.impersonationTarget, "generateAccessToken")
        )
        _ = try await ours.fetchToken()
        let sent = try await requests(google, lifetime: "900s")
        try #require(sent.count == 2)
        for field in ["method", "path", "content_type", "caller"] {
            #expect(sent[0][field] as? String == sent[1][field] as? String, "\(field)")
        }
        let theirs = try #require(sent[0]["body"] as? [String: Any])
        let mine = try #require(sent[1]["body"] as? [String: Any])
        #expect(Set(theirs.keys) == Set(mine.keys))
        #expect(theirs["delegates"] as? [String] == mine["delegates"] as? [String])
        #expect(theirs["scope"] as? [String] == mine["scope"] as? [String])
        #expect(theirs["lifetime"] as? String == mine["lifetime"] as? String)
    }

    @Test("google.auth.default() and our ADC pick the same impersonated credential")
    func sameADCChoice() async throws {
        let google = try await GoogleSandbox.shared()
        let scratch = try ScratchDirectory()
        let variables = ["GOOGLE_APPLICATION_CREDENTIALS": google.impersonatedADCFile, "HOME": scratch.path]
        let reference = try await GoogleAuthReference.resolveADC(environment: variables)
        let resolved = try ApplicationDefaultCredentials.resolve(
            in: .init(variables: variables, productNamePath: "/nonexistent")
        )
        #expect(reference["type"] as? String == resolved.identity.kind.rawValue)
        #expect(reference["principal"] as? String == resolved.identity.principal)
        #expect(reference["source_type"] as? String == "authorized_user")
        #expect(resolved.credential.impersonatedServiceAccount?.sourceCredential.authorizedUserCredentials != nil)
        #expect(reference["delegates"] as? [String] == resolved.credential.impersonatedServiceAccount?.delegates)
    }
}

/// A fixed token as an impersonation source, recording what it was told to invalidate.
final class StaticProvider: InvalidatableAuthTokenProvider {
    let value: String
    let invalidated = Locked<[String]>([])

    init(token: String) { value = token }

    func token() async throws -> String { value }
    func invalidate(token: String) async { invalidated.withLock { $0.append(token) } }
}
