import AuthRPC
import Foundation
import OAuth2
import TestSupport
import Testing

/// After a transient refresh failure the session waits (exponentially, with jitter) before it asks
/// the token endpoint again; meanwhile token requests fail fast with the last transient error.
@Suite("Refresh backoff against a failing sandbox issuer")
struct RefreshBackoffTests {
    // The backoff is longer than the test can take, so its count does not depend on how fast the
    // machine is (with the default 1 s backoff, a loaded machine's 20 calls outlasted 3 windows).
    @Test(
        "while the token endpoint answers 503 and the backoff runs, 20 calls on a stale token make one token request, all UNAVAILABLE"
    )
    func failingIssuerIsNotHammered() async throws {
        let issuer = try await SandboxIssuer.shared()
        let client = try await issuer.makeClient()
        let grant = try await issuer.signIn(client)
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FileAuthSessionStore(fileURL: directory.appendingPathComponent("session.json"))
        try store.save(expired(grant))
        let backoff = RefreshBackoff(initial: .seconds(600), maximum: .seconds(600), jitter: 0)
        let session = try #require(try AuthSession.restore(from: store, refreshBackoff: backoff))
        try await issuer.tokenBehaviour(of: client, status: 503)
        let before = try await issuer.counters(of: client)["token_requests", default: 0]

        let channel = try issuer.channel()
        var messages: Set<String> = []
        for _ in 0..<20 {
            let error = await #expect(throws: RPCError.self) {
                try await issuer.whoAmI(on: channel, options: CallOptions(credentials: .provider(session)))
            }
            #expect(error?.code == .unavailable)
            let cause = error?.cause as? OAuthError
            #expect(cause?.kind == .transient)
            messages.insert(cause?.message ?? "")
        }
        let requests = try await issuer.counters(of: client)["token_requests", default: 0] - before
        #expect(requests == 1, "\(requests) token requests")
        // Failing fast repeats the last transient error: it says what went wrong at the issuer.
        #expect(messages.allSatisfy { $0.contains("503") }, "\(messages)")
        // Nothing was lost meanwhile.
        #expect(try store.retrieve()?.refreshToken == grant.refreshToken)
        #expect(await session.state.authorizationError == nil)
    }

    @Test("once the issuer is back, the session refreshes after the backoff, and the next failure is tried at once")
    func backoffEndsAndResetsOnSuccess() async throws {
        let issuer = try await SandboxIssuer.shared()
        let client = try await issuer.makeClient()
        let grant = try await issuer.signIn(client)
        let backoff = RefreshBackoff(initial: .milliseconds(200), multiplier: 2, maximum: .seconds(1), jitter: 0.2)
        let session = AuthSession(state: expired(grant), refreshBackoff: backoff)
        try await issuer.tokenBehaviour(of: client, status: 503)
        for _ in 0..<3 {
            await #expect(throws: OAuthError.self) { try await session.freshAccessToken() }
        }
        try await issuer.tokenBehaviour(of: client)

        var token: String?
        try await eventually("a refresh succeeds once the backoff is over") {
            token = try? await session.freshAccessToken()
            return token != nil
        }
        #expect(token != grant.accessToken)

        // Reset: after the success, a new failure goes to the issuer straight away.
        try await issuer.tokenBehaviour(of: client, status: 503)
        let before = try await issuer.counters(of: client)["token_requests", default: 0]
        await session.invalidate()
        await #expect(throws: OAuthError.self) { try await session.freshAccessToken() }
        #expect(try await issuer.counters(of: client)["token_requests", default: 0] == before + 1)
        try await issuer.tokenBehaviour(of: client)
    }
}
