import AuthRPC
import AuthSampleService
import Foundation
import GoogleAuth
import OAuth2
import TestSupport
import Testing

/// What GoogleCredentials share with AuthSession, each against the sandbox: per-audience JWTs,
/// the quota project header, the expiry margin, failures classified as the call's status, and
/// the backoff after a failure.
@Suite("GoogleCredentials: audiences, quota project, margin, failures, backoff")
struct GoogleCredentialsBehaviourTests {
    let scope = ServiceConfiguration.googleTestScope

    static func context(_ authority: String) -> AuthTokenContext {
        AuthTokenContext(
            authority: authority,
            method: MethodDescriptor(service: "grpc.testing.TestService", method: "UnaryCall")
        )
    }

    @Test(
        "self-signed JWTs: one per audience, reused by every call to that service; another authority gets another audience, and google-auth verifies both"
    )
    func oneJWTPerAudience() async throws {
        let google = try await GoogleSandbox.shared()
        let key = try ServiceAccountKey(json: try await google.newServiceAccountKey())
        let keyFile = try ScratchDirectory()
        let certificate = try keyFile.write(
            Data(try await google.certificate(of: key.clientEmail, keyID: key.privateKeyID!).utf8),
            to: "cert.pem"
        )
        let credentials = try GoogleCredentials(selfSignedJWTsFor: key)
        let address = "127.0.0.1:\(google.sandbox.tlsPort)"
        for authority in [nil, address, nil, address, "LOCALHOST:\(google.sandbox.tlsPort)"] {
            #expect(try await google.call(credentials, authority: authority).message.username == key.clientEmail)
        }
        let counters = try await google.issuerCounters(of: key.clientEmail)
        #expect(counters["jwt_access_tokens https://localhost/"] == 1, "\(counters)")
        #expect(counters["jwt_access_tokens https://127.0.0.1/"] == 1, "\(counters)")
        #expect(counters["jwt_access_tokens"] == 2, "\(counters)")

        let byName = try #require(credentials.cachedToken(for: Self.context(google.authority)))
        let byAddress = try #require(credentials.cachedToken(for: Self.context(address)))
        let twoJWTs = byName != byAddress
        #expect(twoJWTs, "one JWT per audience")
        #expect(
            credentials.cachedToken(for: Self.context("localhost:1")) == nil,
            "a new authority string has no token yet"
        )
        for (jwt, audience) in [(byName, "https://localhost/"), (byAddress, "https://127.0.0.1/")] {
            let verified = try await GoogleAuthReference.verifyJWT(
                jwt,
                certificatePath: certificate,
                audience: audience
            )
            #expect((verified["claims"] as? [String: Any])?["aud"] as? String == audience)
            await #expect(throws: PeerError.self) {
                try await GoogleAuthReference.verifyJWT(
                    jwt,
                    certificatePath: certificate,
                    audience: "https://pubsub.googleapis.com/"
                )
            }
        }
    }

    @Test("self-signed JWTs need a call's authority (or scopes); an authority that is not host[:port] is refused")
    func selfSignedJWTNeedsAnAuthority() async throws {
        let google = try await GoogleSandbox.shared()
        let key = try ServiceAccountKey(contentsOfFile: google.serviceAccountKeyPath)
        let credentials = try GoogleCredentials(selfSignedJWTsFor: key)
        let noAuthority = await #expect(throws: OAuthError.self) { try await credentials.freshAccessToken() }
        #expect(noAuthority?.kind == .invalidConfiguration)
        let badAuthority = await #expect(throws: OAuthError.self) {
            try await credentials.freshAccessToken(forAuthority: "a b/c")
        }
        #expect(badAuthority?.kind == .invalidConfiguration)
        let scoped = try GoogleCredentials(selfSignedJWTsFor: key, scopes: [scope])
        let token = try await scoped.freshAccessToken()
        #expect(jwtPart(token, 1)["scope"] as? String == scope && jwtPart(token, 1)["aud"] == nil)
        #expect(
            try await scoped.freshAccessToken(forAuthority: "pubsub.googleapis.com") == token,
            "scoped JWTs serve every service"
        )
        #expect(throws: OAuthError.self) { try GoogleCredentials(selfSignedJWTsFor: key, lifetime: .seconds(7200)) }
    }

    @Test(
        "an authorized user's quota project arrives at the server as x-goog-user-project; none without one; the caller's own value wins"
    )
    func quotaProjectArrives() async throws {
        let google = try await GoogleSandbox.shared()
        let withQuota = try GoogleCredentials(
            source: AuthorizedUserTokenSource(
                credentials: AuthorizedUserCredentials(
                    json: try await google.newAuthorizedUser(quotaProjectID: "billed-project")
                ),
                tokenEndpoint: google.tokenEndpoint
            )
        )
        #expect(withQuota.identity.quotaProjectID == "billed-project")
        #expect(
            try await google.call(withQuota).trailers.strings(forKey: "x-sandbox-user-project") == ["billed-project"]
        )
        let callerChoice = try await google.call(withQuota, metadata: ["x-goog-user-project": "caller-project"])
        #expect(callerChoice.trailers.strings(forKey: "x-sandbox-user-project") == ["caller-project"])

        let without = try GoogleCredentials(
            source: AuthorizedUserTokenSource(
                credentials: AuthorizedUserCredentials(json: try await google.newAuthorizedUser()),
                tokenEndpoint: google.tokenEndpoint
            )
        )
        #expect(try await google.call(without).trailers.strings(forKey: "x-sandbox-user-project").isEmpty)

        // GOOGLE_CLOUD_QUOTA_PROJECT bills any credential found by ADC, over the file's.
        let scratch = try ScratchDirectory()
        for file in [google.serviceAccountKeyPath, google.authorizedUserPath] {
            let environment = ApplicationDefaultCredentials.Environment(
                variables: [
                    "GOOGLE_APPLICATION_CREDENTIALS": file, "GOOGLE_CLOUD_QUOTA_PROJECT": "env-project",
                    "HOME": scratch.path,
                ])
            let credentials = try GoogleCredentials.applicationDefault(
                scopes: [scope],
                environment: environment,
                userTokenEndpoint: google.tokenEndpoint
            )
            #expect(
                try await google.call(credentials).trailers.strings(forKey: "x-sandbox-user-project") == ["env-project"]
            )
        }
        let badQuota = ApplicationDefaultCredentials.Environment(variables: [
            "GOOGLE_APPLICATION_CREDENTIALS": google.serviceAccountKeyPath,
            "GOOGLE_CLOUD_QUOTA_PROJECT": "two words",
        ])
        #expect(throws: OAuthError.self) {
            try GoogleCredentials.applicationDefault(scopes: [scope], environment: badQuota)
        }
    }

    @Test(
        "a token living 60 s is fresh for 30 s (the margin is capped at half the lifetime): five calls, one token request"
    )
    func marginCappedAtHalfTheLifetime() async throws {
        let google = try await GoogleSandbox.shared()
        let key = try ServiceAccountKey(json: try await google.newServiceAccountKey(tokenLifetime: 60))
        let credentials = try GoogleCredentials(source: ServiceAccountTokenSource(key: key, scopes: [scope]))
        for _ in 0..<5 {
            #expect(try await google.call(credentials).message.username == key.clientEmail)
        }
        #expect(try await google.issuerCounters(of: key.clientEmail)["jwt_bearer_requests"] == 1)
    }

    @Test(
        "a refused grant fails the call UNAUTHENTICATED and an unreachable token endpoint UNAVAILABLE, the OAuthError kept as the cause"
    )
    func failuresBecomeCallStatuses() async throws {
        let google = try await GoogleSandbox.shared()
        let key = try ServiceAccountKey(contentsOfFile: google.serviceAccountKeyPath)
        let refused = try GoogleCredentials(
            source: ServiceAccountTokenSource(key: key, scopes: [scope], subject: "stranger@example.com")
        )
        let unauthenticated = await #expect(throws: RPCError.self) { try await google.call(refused) }
        #expect(unauthenticated?.code == .unauthenticated)
        #expect((unauthenticated?.cause as? OAuthError)?.oauthErrorCode == "invalid_grant")

        let json = try Data(contentsOf: URL(fileURLWithPath: google.serviceAccountKeyPath))
            .editingJSON(["token_uri": "http://127.0.0.1:\(Ports.closed())/token"])
        let unreachable = try GoogleCredentials(
            source: ServiceAccountTokenSource(key: ServiceAccountKey(json: json), scopes: [scope])
        )
        let unavailable = await #expect(throws: RPCError.self) { try await google.call(unreachable) }
        #expect(unavailable?.code == .unavailable)
        #expect((unavailable?.cause as? OAuthError)?.isTransient == true)
    }

    @Test(
        "after a failed request the next calls fail at once with the same error until the backoff passes; then a token comes"
    )
    func backoffAfterAFailure() async throws {
        let google = try await GoogleSandbox.shared()
        let user = try AuthorizedUserCredentials(json: try await google.newAuthorizedUser())
        let backoff = RefreshBackoff(initial: .seconds(2), multiplier: 1, maximum: .seconds(2), jitter: 0)
        let credentials = try GoogleCredentials(
            source: AuthorizedUserTokenSource(credentials: user, tokenEndpoint: google.tokenEndpoint),
            refreshBackoff: backoff
        )
        try await google.tokenBehaviour(of: user.clientID, status: 503)
        for _ in 0..<5 {
            let error = await #expect(throws: RPCError.self) { try await google.call(credentials) }
            #expect(error?.code == .unavailable)
            #expect((error?.cause as? OAuthError)?.message.contains("503") == true)
        }
        let failedRequests = try await google.issuerCounters(of: user.clientID)["token_requests", default: 0]
        #expect(failedRequests >= 1 && failedRequests < 5, "\(failedRequests) token requests for 5 calls")
        try await google.tokenBehaviour(of: user.clientID, status: 0)
        var caller: String?
        try await eventually("a call goes through once the token endpoint answers again") {
            caller = try? await google.call(credentials).message.username
            return caller != nil
        }
        #expect(caller == google.sandbox.user)
    }

    @Test(
        "a refused grant is asked again only after the backoff too, so a revoked key does not hammer the token endpoint"
    )
    func refusalsBackOff() async throws {
        let google = try await GoogleSandbox.shared()
        let user = try AuthorizedUserCredentials(json: try await google.newAuthorizedUser())
        try await google.revokeEverything(of: user.clientID)
        let credentials = try GoogleCredentials(
            source: AuthorizedUserTokenSource(credentials: user, tokenEndpoint: google.tokenEndpoint),
            refreshBackoff: RefreshBackoff(initial: .seconds(30), jitter: 0)
        )
        for _ in 0..<5 {
            let error = await #expect(throws: RPCError.self) { try await google.call(credentials) }
            #expect(error?.code == .unauthenticated)
            #expect((error?.cause as? OAuthError)?.oauthErrorCode == "invalid_grant")
        }
        #expect(try await google.issuerCounters(of: user.clientID)["refresh_requests"] == 1)
    }
}
