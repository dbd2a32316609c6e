import AuthRPC
import Foundation
import OAuth2
import TestSupport
import Testing

/// Tokens and client secrets never reach a log line, a `description` or an error message, on
/// the success paths and the failure paths alike.
@Suite("No secrets in logs, descriptions or errors")
struct NoSecretsTests {
    @Test(
        "refresh, rotation, rejected token retry, revocation, failures: every log line and message is free of secrets"
    )
    func everythingIsRedacted() async throws {
        let issuer = try await SandboxIssuer.shared()
        let client = try await issuer.makeClient(confidential: true, authentication: .clientSecretPost)
        let signedIn = try await issuer.signIn(client)
        let capture = LogCapture()
        let store = InMemoryAuthSessionStore()
        let session = AuthSession(state: expired(signedIn), store: store, logger: capture.logger(label: "session"))
        let channel = try Channel(
            target: "localhost:\(issuer.sandbox.tlsPort)",
            transportSecurity: .tls(TLSConfiguration(trustRoots: .certificates(pem: issuer.sandbox.caCertificatePEM))),
            logger: capture.logger(label: "channel")
        )
        var texts: [String] = []

        // Success: refresh inside a call, then a server-side rejection and the retry.
        _ = try await issuer.whoAmI(on: channel, options: CallOptions(credentials: .provider(session)))
        try await issuer.revokeAccessTokens(of: client)
        _ = try await issuer.whoAmI(on: channel, options: CallOptions(credentials: .provider(session)))
        let refreshed = await session.state
        texts += [
            refreshed.description, String(describing: refreshed), String(reflecting: refreshed), client.description,
            "\(CallCredentials.provider(session))",
        ]

        // Failures: a wrong static token, a revoked grant, a wrong client secret.
        let secrets = [
            signedIn.accessToken!, signedIn.refreshToken!, refreshed.accessToken!, refreshed.refreshToken!,
            client.secret!,
        ]
        let rejected = try #require(
            await #expect(throws: RPCError.self) {
                try await issuer.whoAmI(
                    on: channel,
                    options: CallOptions(credentials: .accessToken(signedIn.accessToken!))
                )
            }
        )
        texts += [rejected.description, rejected.message, "\(rejected)"]
        try await issuer.revokeEverything(of: client)
        await session.invalidate()
        let revoked = try #require(
            await #expect(throws: RPCError.self) {
                try await issuer.whoAmI(on: channel, options: CallOptions(credentials: .provider(session)))
            }
        )
        #expect(revoked.code == .unauthenticated)
        texts += [revoked.description, "\(revoked)", String(describing: revoked.cause)]
        let wrongSecret = OAuthClient(
            id: client.id,
            secret: "wrong-\(client.secret!)",
            authentication: .clientSecretPost
        )
        var withWrongSecret = expired(refreshed)
        withWrongSecret.client = wrongSecret
        let refused = try #require(
            await #expect(throws: OAuthError.self) {
                try await AuthSession(state: withWrongSecret, logger: capture.logger(label: "wrong-secret"))
                    .freshAccessToken()
            }
        )
        #expect(refused.oauthErrorCode == "invalid_client")
        texts += [refused.description, refused.message, wrongSecret.description]
        let stored = try #require(try store.retrieve())
        texts += [stored.description]

        let everything = capture.all + texts
        #expect(
            capture.all.contains { $0.contains("refreshing the access token") },
            "the capture saw the session's logs"
        )
        for secret in secrets + [wrongSecret.secret!] {
            for line in everything {
                #expect(!line.contains(secret), "a secret leaked into: \(line.prefix(120))")
            }
        }
    }
}
