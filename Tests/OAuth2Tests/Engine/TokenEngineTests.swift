import AuthRPCSystem
import Foundation
import Testing

@testable import OAuth2

/// The token engine's rules, with a closure as the fetch and a clock moved by hand: no issuer, no
/// socket, no waiting on real time.
@Suite("TokenEngine: fast path, one shared fetch, expiry margin, invalidation, backoff, stopping")
struct TokenEngineTests {
    let clock = ManualClock()
    let fetches = Locked(0)

    /// A backoff without jitter: 10 s after the first failure, doubling, at most a minute.
    static let backoff = RefreshBackoff(initial: .seconds(10), multiplier: 2, maximum: .seconds(60), jitter: 0)

    /// An engine on the test's clock; without a stale window unless a test asks for one (the
    /// rules before refreshing ahead).
    func makeEngine(
        holding: TokenEngine.Holding = .nothing,
        scope: TokenEngine.BackoffScope = .transientFailures,
        staleWindow: Duration = .zero
    ) -> TokenEngine {
        TokenEngine(
            holding: holding,
            expiryTolerance: .seconds(60),
            staleWindow: staleWindow,
            refreshBackoff: Self.backoff,
            backoffScope: scope,
            clock: clock.engineClock
        )
    }

    var fetchCount: Int { fetches.withLock { $0 } }

    /// A fetch that counts itself and has `engine` hold `token-<n>` (living `lifetime`), as an
    /// owner does with what its source fetched.
    func fetchingTokens(
        into engine: TokenEngine,
        lifetime: Duration = .seconds(3600)
    ) -> @Sendable (UInt64) async -> TokenEngine.Outcome {
        { [fetches, clock] generation in
            let run = fetches.withLock {
                $0 += 1
                return $0
            }
            let fetched = FetchedAccessToken(accessToken: "token-\(run)", receivedAt: clock.date, lifetime: lifetime)
            engine.accept(fetched, generation: generation)
            return .token(fetched.accessToken)
        }
    }

    /// A fetch that counts itself and fails with `error(n)`.
    func failing(with error: @escaping @Sendable (Int) -> OAuthError) -> @Sendable (UInt64) async -> TokenEngine.Outcome
    {
        { [fetches] _ in
            .failure(
                error(
                    fetches.withLock {
                        $0 += 1
                        return $0
                    }
                )
            )
        }
    }

    /// What a request came to: a token, or an error's message.
    enum Answer: Equatable {
        case token(String)
        case failed(String)
    }

    /// What `token(fetch:)` comes to.
    func request(
        _ engine: TokenEngine,
        _ fetch: @escaping @Sendable (UInt64) async -> TokenEngine.Outcome
    ) async -> Answer {
        do throws(OAuthError) {
            return .token(try await engine.token(fetch: fetch))
        } catch {
            return .failed(error.message)
        }
    }

    @Test("a fresh token is handed out without fetching, on the fast path and the slow one")
    func freshTokenWithoutFetching() async {
        let engine = makeEngine(holding: .token("held", issuedAt: nil, expiresAt: clock.date.addingTimeInterval(660)))
        #expect(engine.cachedToken() == "held")
        #expect(await request(engine, fetchingTokens(into: engine)) == .token("held"))
        #expect(fetchCount == 0)

        // A token without a known expiry stays fresh until someone says otherwise.
        let forever = makeEngine(holding: .token("forever", issuedAt: nil, expiresAt: nil))
        clock.advance(by: .seconds(86_400 * 365))
        #expect(forever.cachedToken() == "forever")
        #expect(await request(forever, fetchingTokens(into: forever)) == .token("forever"))
        #expect(fetchCount == 0)
    }

    @Test("a request while a fetch is in flight joins it; its own fetch never runs")
    func requestsJoinTheFetchInFlight() async {
        let engine = makeEngine()
        let gate = Gate()
        let first = engine.nextStep { [fetches] _ in
            fetches.withLock { $0 += 1 }
            await gate.wait()
            return .token("shared")
        }
        let second = engine.nextStep { _ in
            Issue.record("a second fetch started while one was in flight")
            return .token("second")
        }
        guard case .wait(let running) = first, case .wait(let joined) = second else {
            Issue.record("expected two waits, got \(first) and \(second)")
            return
        }
        #expect(running == joined)
        gate.open()
        guard case .token(let token) = await joined.value else {
            Issue.record("the shared fetch did not answer with a token")
            return
        }
        #expect(token == "shared")
        #expect(fetchCount == 1)
    }

    @Test("50 callers at once on no token: one fetch, every caller gets its token")
    func concurrentCallersShareOneFetch() async {
        let engine = makeEngine()
        let gate = Gate()
        let (started, fetchStarted) = AsyncStream<Void>.makeStream()
        let fetch = fetchingTokens(into: engine)
        let gatedFetch: @Sendable (UInt64) async -> TokenEngine.Outcome = { generation in
            fetchStarted.yield()
            await gate.wait()
            return await fetch(generation)
        }
        await withTaskGroup(of: Answer.self) { group in
            for _ in 0..<50 {
                group.addTask { await request(engine, gatedFetch) }
            }
            var iterator = started.makeAsyncIterator()
            _ = await iterator.next()
            gate.open()
            var answers: [Answer] = []
            for await answer in group { answers.append(answer) }
            #expect(answers.count == 50)
            #expect(answers.allSatisfy { $0 == .token("token-1") })
        }
        #expect(fetchCount == 1)
    }

    @Test("a fetched token stops counting as fresh 60 s before it expires, or half its lifetime when shorter")
    func expiryMargin() async {
        let engine = makeEngine()
        #expect(await request(engine, fetchingTokens(into: engine)) == .token("token-1"))
        clock.advance(by: .seconds(3539))
        #expect(engine.cachedToken() == "token-1")
        #expect(await request(engine, fetchingTokens(into: engine)) == .token("token-1"))
        #expect(fetchCount == 1)
        clock.advance(by: .seconds(1))
        #expect(engine.cachedToken() == nil)
        #expect(await request(engine, fetchingTokens(into: engine, lifetime: .seconds(100))) == .token("token-2"))
        #expect(fetchCount == 2)

        // A 100-second token: the margin is 50 s, not 60 s.
        clock.advance(by: .seconds(49))
        #expect(engine.cachedToken() == "token-2")
        clock.advance(by: .seconds(1))
        #expect(engine.cachedToken() == nil)
        #expect(await request(engine, fetchingTokens(into: engine)) == .token("token-3"))
    }

    @Test("invalidating the held token makes the next request fetch; invalidating another changes nothing")
    func invalidateForcesAFetch() async {
        let engine = makeEngine(holding: .token("held", issuedAt: nil, expiresAt: clock.date.addingTimeInterval(660)))
        engine.invalidate(token: "some-older-token")
        #expect(engine.cachedToken() == "held")
        engine.invalidate(token: "held")
        #expect(engine.cachedToken() == nil)
        #expect(await request(engine, fetchingTokens(into: engine)) == .token("token-1"))
        #expect(fetchCount == 1)
        #expect(engine.cachedToken() == "token-1")
    }

    @Test("after a transient failure, requests fail fast with the same error until the backoff has passed")
    func backoffAfterTransientFailure() async {
        let engine = makeEngine()
        let down = failing { OAuthError(.transient, "the issuer is down (\($0))") }
        #expect(await request(engine, down) == .failed("the issuer is down (1)"))
        clock.advance(by: .milliseconds(9999))
        #expect(await request(engine, down) == .failed("the issuer is down (1)"))
        #expect(fetchCount == 1)

        // The backoff is over: ask again; a second failure waits twice as long.
        clock.advance(by: .milliseconds(1))
        #expect(await request(engine, down) == .failed("the issuer is down (2)"))
        clock.advance(by: .seconds(19))
        #expect(await request(engine, down) == .failed("the issuer is down (2)"))
        #expect(fetchCount == 2)

        // A fetched token ends the backoff: the next failure is asked at once and waits 10 s again.
        clock.advance(by: .seconds(1))
        #expect(await request(engine, fetchingTokens(into: engine)) == .token("token-3"))
        engine.invalidate(token: "token-3")
        #expect(await request(engine, down) == .failed("the issuer is down (4)"))
        clock.advance(by: .seconds(10))
        #expect(await request(engine, down) == .failed("the issuer is down (5)"))
    }

    @Test(
        "a refused grant is kept: a stopped engine fails without fetching; refusals are backed off from for every-failure owners"
    )
    func authorizationFailureIsKept() async {
        let refused = failing { OAuthError(.authorization, "refused (\($0))", oauthErrorCode: "invalid_grant") }

        // AuthSession's engine: a refusal is not backed off from; the session stops the engine.
        let session = makeEngine(scope: .transientFailures)
        #expect(await request(session, refused) == .failed("refused (1)"))
        #expect(await request(session, refused) == .failed("refused (2)"))
        session.hold(.stopped(OAuthError(.authorization, "stopped", oauthErrorCode: "invalid_grant")))
        clock.advance(by: .seconds(3600))
        #expect(await request(session, refused) == .failed("stopped"))
        #expect(session.cachedToken() == nil)
        #expect(fetchCount == 2)
        // A new sign-in (a new generation) fetches again.
        session.reset(to: .nothing)
        #expect(await request(session, fetchingTokens(into: session)) == .token("token-3"))

        // A Google credential's engine: the refusal comes back until the backoff has passed.
        let google = makeEngine(scope: .everyFailure)
        #expect(await request(google, refused) == .failed("refused (4)"))
        clock.advance(by: .seconds(9))
        #expect(await request(google, refused) == .failed("refused (4)"))
        #expect(fetchCount == 4)
        clock.advance(by: .seconds(1))
        #expect(await request(google, refused) == .failed("refused (5)"))
    }

    @Test("a fetch that was cancelled starts no backoff")
    func cancelledFetchStartsNoBackoff() async {
        let engine = makeEngine(scope: .everyFailure)
        let cancelled = failing { OAuthError(.transient, "cancelled (\($0))", underlying: CancellationError()) }
        #expect(await request(engine, cancelled) == .failed("cancelled (1)"))
        #expect(await request(engine, cancelled) == .failed("cancelled (2)"))
    }

    @Test("cancelling one waiter does not cancel the shared fetch: the others get its token and it is held")
    func cancelledWaiterLeavesTheFetchRunning() async {
        let engine = makeEngine()
        let gate = Gate()
        let fetchWasCancelled = Locked<Bool?>(nil)
        let (started, fetchStarted) = AsyncStream<Void>.makeStream()
        let fetch = fetchingTokens(into: engine)
        let gatedFetch: @Sendable (UInt64) async -> TokenEngine.Outcome = { generation in
            fetchStarted.yield()
            await gate.wait()
            fetchWasCancelled.withLock { $0 = Task.isCancelled }
            return await fetch(generation)
        }
        let cancelled = Task { await request(engine, gatedFetch) }
        var iterator = started.makeAsyncIterator()
        _ = await iterator.next()
        cancelled.cancel()
        let other = Task { await request(engine, gatedFetch) }
        gate.open()
        #expect(await other.value == .token("token-1"))
        _ = await cancelled.value
        #expect(fetchWasCancelled.withLock { $0 } == false)
        #expect(fetchCount == 1)
        #expect(engine.cachedToken() == "token-1")
    }

    @Test("a reset starts a new generation: the fetch in flight is not shared with it, and its token is not held")
    func resetStartsANewGeneration() async {
        let engine = makeEngine()
        let gate = Gate()
        let fetch = fetchingTokens(into: engine)
        let old = engine.nextStep { generation in
            await gate.wait()
            return await fetch(generation)
        }
        engine.reset(to: .nothing)
        let new = engine.nextStep(fetch)
        guard case .wait(let oldFetch) = old, case .wait(let newFetch) = new else {
            Issue.record("expected two waits, got \(old) and \(new)")
            return
        }
        #expect(oldFetch != newFetch)
        _ = await newFetch.value
        #expect(engine.cachedToken() == "token-1")
        gate.open()
        _ = await oldFetch.value
        // The old generation's token (token-2) was fetched but not taken.
        #expect(engine.cachedToken() == "token-1")
        #expect(fetchCount == 2)
    }
}
