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
        "a stale token while the token endpoint takes 8 s: calls with a 4 s deadline succeed, one refresh runs behind"
    )
    func staleTokenDoesNotMakeCallsWait() async throws {
        let issuer = try await SandboxIssuer.shared()
        let client = try await issuer.makeClient()
        let grant = try await issuer.signIn(client)
        let session = AuthSession(state: stale(grant))
        try await issuer.tokenBehaviour(of: client, delayMilliseconds: 8000)
        defer { Task { try? await issuer.tokenBehaviour(of: client) } }
        let before = try await issuer.counters(of: client)["token_requests", default: 0]

        let channel = try issuer.channel()
        // Half the endpoint's delay: a call that waited for the refresh could not succeed, and a
        // loaded machine still has seconds to connect.
        let options = CallOptions(timeout: .seconds(4), credentials: .provider(session))
        for _ in 0..<5 {
            let response = try await issuer.whoAmI(on: channel, options: options)
            #expect(response.username == issuer.sandbox.user)
        }
        // One refresh went out behind the calls; once it is back the session holds a new token.
        try await issuer.waitForTokenRequests(of: client, moreThan: before)
        var current = session.cachedToken()
        for _ in 0..<750 where current == grant.accessToken || current == nil {
            try await Task.sleep(for: .milliseconds(20))
            current = session.cachedToken()
        }
        #expect(current != nil && current != grant.accessToken)
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
        let options = CallOptions(timeout: .seconds(5), credentials: .provider(session))
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
