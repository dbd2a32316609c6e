import AuthRPC
import AuthRPCSystem
import AuthSampleService
import Foundation
import GoogleAuth
import OAuth2
import OAuth2TestSupport
import TestSupport
import Testing

/// ID tokens from the three places Google hands them out, each checked by the grpcio service
/// (google-auth verifies signature, times and audience) and compared with google-auth's own.
@Suite("ID tokens: service-account key, metadata server, impersonation")
struct IDTokenTests {
    /// What the service must see for a token, and its claims compared with google-auth's.
    private func check(
        _ source: any GoogleTokenSource,
        principal: String,
        reference: [String: Any],
        google: GoogleSandbox
    ) async throws {
        let fetched = try await source.fetchToken()
        let claims = jwtPart(fetched.accessToken, 1)
        let exp = try #require(claims["exp"] as? Int)
        // The lifetime is read from the token's own exp.
        let expiresAt = try #require(fetched.expiresAt)
        #expect(abs(expiresAt.timeIntervalSince1970 - Double(exp)) < 1)
        let theirs = try #require(reference["claims"] as? [String: Any])
        for name in ["iss", "aud", "email", "sub", "azp"] {
            #expect(claims[name] as? String == theirs[name] as? String, "\(name)")
        }
        #expect(Set(claims.keys) == Set(theirs.keys))
        #expect(try await google.whoAmI(token: fetched.accessToken).user == principal)
        // Through GoogleCredentials, as a call's provider.
        let credentials = try GoogleCredentials(source: source)
        #expect(try await google.call(credentials).message.username == principal)
    }

    @Test("a service-account key: the JWT bearer grant with target_audience, claims as google-auth's")
    func serviceAccountKey() async throws {
        let google = try await GoogleSandbox.shared()
        let key = try ServiceAccountKey(contentsOfFile: google.serviceAccountKeyPath)
        let transport = RecordingTransport()
        let source = try ServiceAccountIDTokenSource(key: key, audience: google.idTokenAudience, transport: transport)
        let reference = try await GoogleAuthReference.idToken(
            audience: google.idTokenAudience,
            how: ["--key", google.serviceAccountKeyPath]
        )
        try await check(source, principal: google.serviceAccountEmail, reference: reference, google: google)
        let form = try #require(transport.bodies.first)
        let fields = Dictionary(
            uniqueKeysWithValues: form.split(separator: "&").map {
                let pair = $0.split(separator: "=", maxSplits: 1)
                return (String(pair[0]), String(pair.count > 1 ? pair[1] : "").removingPercentEncoding ?? "")
            }
        )
        #expect(fields["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer")
        // The assertion's claims are google-auth's: iss, aud, target_audience, iat, exp; no scope, no sub.
        let assertion = jwtPart(try #require(fields["assertion"]), 1)
        #expect(assertion["target_audience"] as? String == google.idTokenAudience)
        #expect(assertion["iss"] as? String == google.serviceAccountEmail)
        #expect(Set(assertion.keys) == ["iss", "aud", "target_audience", "iat", "exp"])
    }

    @Test("the metadata server: identity?audience=…&format=full, the same query google-auth sends")
    func metadataServer() async throws {
        let google = try await GoogleSandbox.shared()
        let source = try ComputeEngineIDTokenSource(audience: google.idTokenAudience, host: google.metadataHost)
        let before = try await google.metadataIdentityRequests().count
        let reference = try await GoogleAuthReference.idToken(
            audience: google.idTokenAudience,
            how: ["--metadata"],
            environment: ["GCE_METADATA_HOST": google.metadataHost, "GCE_METADATA_IP": google.metadataHost]
        )
        try await check(source, principal: google.metadataEmail, reference: reference, google: google)
        let queries = Array(try await google.metadataIdentityRequests().dropFirst(before))
        try #require(queries.count >= 2)
        #expect(queries[0] == queries[1])
        #expect(queries[1]["audience"] == [google.idTokenAudience])
        #expect(queries[1]["format"] == ["full"])
    }

    @Test("impersonation: generateIdToken, the same request google-auth sends")
    func impersonation() async throws {
        let google = try await GoogleSandbox.shared()
        let key = try ServiceAccountKey(contentsOfFile: google.serviceAccountKeyPath)
        let sourceCredentials = try GoogleCredentials(
            source: ServiceAccountTokenSource(key: key, scopes: [ImpersonatedServiceAccountCredentials.sourceScope])
        )
        let source = try ImpersonatedIDTokenSource(
            source: sourceCredentials,
            targetPrincipal: google.impersonationTarget,
            audience: google.idTokenAudience,
            endpoint: google.iamURL(google.impersonationTarget, "generateIdToken")
        )
        let reference = try await GoogleAuthReference.idToken(
            audience: google.idTokenAudience,
            how: [
                "--impersonate", google.impersonationTarget, "--iam-endpoint", google.iamEndpoint, "--source-key",
                google.serviceAccountKeyPath,
            ]
        )
        try await check(source, principal: google.impersonationTarget, reference: reference, google: google)
        // Only this test asks for the key's account's ID tokens (the ADC test's caller is the user).
        let sent = try await google.iamRequests().filter {
            $0["method"] as? String == "generateIdToken" && $0["caller"] as? String == google.serviceAccountEmail
        }
        try #require(sent.count >= 2)
        for field in ["path", "content_type", "caller"] {
            #expect(sent[0][field] as? String == sent[1][field] as? String, "\(field)")
        }
        let theirs = try #require(sent[0]["body"] as? [String: Any])
        let mine = try #require(sent[1]["body"] as? [String: Any])
        #expect(Set(theirs.keys) == Set(mine.keys))
        #expect(theirs["audience"] as? String == mine["audience"] as? String)
        #expect(theirs["includeEmail"] as? Bool == mine["includeEmail"] as? Bool)
        // google-auth sends null for no delegates, this package []: the same chain.
        #expect((theirs["delegates"] as? [String]) ?? [] == mine["delegates"] as? [String])
    }

    @Test("a token for another audience is refused by the service (UNAUTHENTICATED)")
    func wrongAudience() async throws {
        let google = try await GoogleSandbox.shared()
        let key = try ServiceAccountKey(contentsOfFile: google.serviceAccountKeyPath)
        let source = try ServiceAccountIDTokenSource(key: key, audience: "https://another-service.a.run.app")
        let error = try await #require(throws: RPCError.self) {
            try await google.call(GoogleCredentials(source: source))
        }
        #expect(error.code == .unauthenticated)
    }

    @Test("ADC's ID tokens: the impersonated file uses generateIdToken; a user's credentials are refused")
    func applicationDefault() async throws {
        let google = try await GoogleSandbox.shared()
        let impersonated = try ApplicationDefaultCredentials.resolve(
            in: .init(
                variables: ["GOOGLE_APPLICATION_CREDENTIALS": google.impersonatedADCFile],
                productNamePath: "/nonexistent"
            )
        )
        let credentials = try GoogleCredentials(
            source: impersonated.idTokenSource(
                audience: google.idTokenAudience,
                userTokenEndpoint: google.tokenEndpoint
            )
        )
        #expect(try await google.call(credentials).message.username == google.impersonationTarget)

        let user = try ApplicationDefaultCredentials.resolve(
            in: .init(
                variables: ["GOOGLE_APPLICATION_CREDENTIALS": google.authorizedUserPath],
                productNamePath: "/nonexistent"
            )
        )
        let refused = try #require(throws: OAuthError.self) { try user.idTokenSource(audience: google.idTokenAudience) }
        #expect(refused.kind == .invalidConfiguration)
        #expect(refused.message.contains("impersonate"))
    }
}
