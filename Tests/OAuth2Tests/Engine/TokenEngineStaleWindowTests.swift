import AuthRPCSystem
import Foundation
import Testing

@testable import OAuth2

/// Refreshing ahead of expiry (issue 15, item 6): within the stale window a request gets the held
/// token at once and one fetch starts in the background.
extension TokenEngineTests {
    @Test("within the stale window: the token at once, one background fetch for all callers, then the new token")
    func staleTokenIsRefreshedInTheBackground() async {
        let engine = makeEngine(staleWindow: .seconds(225))
        #expect(await request(engine, fetchingTokens(into: engine)) == .token("token-1"))
        // 3600 s token: stale from 3375 s, expired from 3540 s.
        clock.advance(by: .seconds(3374))
        #expect(engine.cachedToken() == "token-1")
        clock.advance(by: .seconds(1))
        // The fast path leaves the first stale request to start the refresh...
        #expect(engine.cachedToken() == nil)
        let gate = Gate()
        let fetch = fetchingTokens(into: engine)
        let gatedFetch: @Sendable (UInt64) async -> TokenEngine.Outcome = { generation in
            await gate.wait()
            return await fetch(generation)
        }
        // ...which answers the held token without waiting for it.
        guard case .answer("token-1") = engine.nextStep(gatedFetch) else {
            Issue.record("a stale token was not answered at once")
            return
        }
        // While it runs, every request gets the held token, on both paths, and starts nothing.
        #expect(engine.cachedToken() == "token-1")
        for _ in 0..<20 {
            #expect(await request(engine, fetchingTokens(into: engine)) == .token("token-1"))
        }
        #expect(fetchCount == 1)
        gate.open()
        var fresh: String?
        for _ in 0..<10_000 where fresh != "token-2" {
            fresh = engine.cachedToken()
            await Task.yield()
        }
        #expect(fresh == "token-2")
        #expect(fetchCount == 2)
    }

    @Test("a failed background fetch keeps the token until it expires; the next waits for the backoff; expired: inline")
    func failedBackgroundFetchKeepsTheToken() async {
        let engine = makeEngine(scope: .everyFailure, staleWindow: .seconds(225))
        #expect(await request(engine, fetchingTokens(into: engine)) == .token("token-1"))
        clock.advance(by: .seconds(3400))
        let down = failing { OAuthError(.authorization, "refused (\($0))", oauthErrorCode: "invalid_grant") }
        #expect(await request(engine, down) == .token("token-1"))
        // The failure lands in the background; the token stays, and nothing is asked meanwhile.
        _ = await engine.fetchInFlight()?.value
        #expect(engine.cachedToken() == "token-1")
        #expect(await request(engine, down) == .token("token-1"))
        #expect(fetchCount == 2)
        // After the backoff (10 s), the next stale request tries again in the background.
        clock.advance(by: .seconds(10))
        #expect(engine.cachedToken() == nil)
        #expect(await request(engine, down) == .token("token-1"))
        _ = await engine.fetchInFlight()?.value
        #expect(fetchCount == 3)
        // Past the expiry (3540 s) the token is no longer handed out: the request waits for a fetch.
        clock.advance(by: .seconds(200))
        #expect(engine.cachedToken() == nil)
        #expect(await request(engine, fetchingTokens(into: engine)) == .token("token-4"))
    }

    @Test("the stale window is at most half the lifetime: a short-lived token is not refreshed on arrival")
    func shortLivedTokenIsNotStaleAtOnce() async {
        let engine = makeEngine(staleWindow: .seconds(225))
        #expect(await request(engine, fetchingTokens(into: engine, lifetime: .seconds(300))) == .token("token-1"))
        // 300 s token: stale from 150 s (half), expired from 240 s (60 s margin).
        clock.advance(by: .seconds(149))
        #expect(engine.cachedToken() == "token-1")
        clock.advance(by: .seconds(1))
        #expect(engine.cachedToken() == nil)
        #expect(fetchCount == 1)
    }

    @Test("a stale window no longer than the expiry margin turns refreshing ahead off")
    func zeroStaleWindowIsTheOldBehaviour() async {
        let engine = makeEngine(staleWindow: .zero)
        #expect(await request(engine, fetchingTokens(into: engine)) == .token("token-1"))
        clock.advance(by: .seconds(3539))
        #expect(engine.cachedToken() == "token-1")
        #expect(await request(engine, fetchingTokens(into: engine)) == .token("token-1"))
        #expect(fetchCount == 1)
    }

    @Test("the held token keeps the expiry judged when it was taken in: holding it again does not stretch it")
    func holdingAgainKeepsTheJudgedExpiry() async {
        let engine = makeEngine()
        engine.hold(.token("held", issuedAt: clock.date, expiresAt: clock.date.addingTimeInterval(3600)))
        clock.advance(by: .seconds(3540))
        clock.stepWallClock(by: .seconds(-3540))
        // The owner tells the engine again what it holds (its state changed otherwise).
        engine.hold(.token("held", issuedAt: clock.date, expiresAt: clock.date.addingTimeInterval(3600)))
        #expect(engine.cachedToken() == nil)
    }
}
