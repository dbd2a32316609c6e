import AuthRPC
import AuthSampleService
import Foundation
import OAuth2
import TestSupport
import Testing

/// Refreshing ahead of expiry against the Authlib sandbox issuer and the grpcio test service: a
/// session whose token is within the stale window answers calls at once while the issuer takes
/// its time, and refreshes in the background.
@Suite("AuthSession refreshes ahead of expiry (sandbox issuer)")
struct RefreshAheadTests {
    @Test(
        "a stale token while the token endpoint holds the refresh: calls succeed meanwhile, one refresh runs behind"
    )
    func staleTokenDoesNotMakeCallsWait() async throws {
        let issuer = try await SandboxIssuer.shared()
        let client = try await issuer.makeClient()
        let grant = try await issuer.signIn(client)
        let accessToken = try #require(grant.accessToken)

        // Connecting (TLS, HTTP/2 settings) is done first, with the grant's token and a deadline
        // only a hang reaches: on a loaded machine it can take seconds, which must not count
        // against the calls below.
        let channel = try issuer.channel()
        _ = try await issuer.whoAmI(
            on: channel,
            options: CallOptions(timeout: .seconds(120), credentials: .accessToken(accessToken))
        )

        let session = AuthSession(state: stale(grant))
        let changes = session.stateChanges()
        try await issuer.holdTokenRequests(of: client)
        defer { Task { try? await issuer.releaseTokenRequests(of: client) } }
        let before = try await issuer.counters(of: client)["token_requests", default: 0]

        // The refresh is held until the calls are done (or 60 s): a call that waited for it could
        // only end by its deadline, which comes before the refresh's own 30 s timeout (after which
        // the stale token would be handed out). Calls that do not wait need no more than a round
        // trip on the open connection.
        let options = CallOptions(timeout: .seconds(20), credentials: .provider(session))
        for _ in 0..<5 {
            let response = try await issuer.whoAmI(on: channel, options: options)
            #expect(response.username == issuer.sandbox.user)
        }
        #expect(session.cachedToken() == accessToken)
        try await issuer.waitForTokenRequests(of: client, moreThan: before)

        // One refresh went out behind the calls; once it is answered the session holds a new token.
        try await issuer.releaseTokenRequests(of: client)
        let refreshed = Task {
            for await state in changes where state.accessToken != nil && state.accessToken != accessToken {
                return state.accessToken
            }
            return nil
        }
        let newToken = try #require(await value(of: refreshed, waitingAtMost: .seconds(60)) ?? nil)
        #expect(session.cachedToken() == newToken)
        #expect(try await issuer.counters(of: client)["token_requests", default: 0] - before == 1)
        _ = try await issuer.whoAmI(on: channel, options: options)
    }

    @Test(
        "a background refresh the issuer fails (503): calls keep the token, nothing is lost, the session is not stopped"
    )
    func failedRefreshAheadKeepsTheToken() async throws {
        let issuer = try await SandboxIssuer.shared()
        let client = try await issuer.makeClient()
        let grant = try await issuer.signIn(client)
        // A backoff longer than the test, so no second attempt however slow the machine is.
        let session = AuthSession(state: stale(grant), refreshBackoff: RefreshBackoff(initial: .seconds(600)))
        try await issuer.tokenBehaviour(of: client, status: 503)
        defer { Task { try? await issuer.tokenBehaviour(of: client) } }
        let before = try await issuer.counters(of: client)["token_requests", default: 0]

        let channel = try issuer.channel()
        // The deadline is not what this test is about (the issuer fails the refresh at once);
        // only a hang reaches it, not connecting on a loaded machine.
        let options = CallOptions(timeout: .seconds(120), credentials: .provider(session))
        _ = try await issuer.whoAmI(on: channel, options: options)
        try await issuer.waitForTokenRequests(of: client, moreThan: before)
        for _ in 0..<5 {
            let response = try await issuer.whoAmI(on: channel, options: options)
            #expect(response.username == issuer.sandbox.user)
        }
        #expect(session.cachedToken() == grant.accessToken)
        #expect(await session.state.refreshToken == grant.refreshToken)
        #expect(await session.state.authorizationError == nil)
        // The backoff keeps the calls meanwhile from asking again.
        #expect(try await issuer.counters(of: client)["token_requests", default: 0] - before == 1)
    }

    /// `state` with its token 3 min from expiry (of an hour): within the default stale window
    /// (3 min 45 s), outside the expiry margin (60 s). The issuer's own expiry is later.
    private func stale(_ state: AuthState) -> AuthState {
        var state = state
        state.accessTokenIssuedAt = Date().addingTimeInterval(-3420)
        state.accessTokenExpiresAt = Date().addingTimeInterval(180)
        return state
    }
}
