import AuthRPCSystem
import Foundation
import TestSupport
import Testing

@testable import OAuth2

/// The review's defects in the engine (issue 15, item 8), each reproduced on the hand-moved
/// clock: a backwards wall-clock step, a server rejecting every call, a fetch that never answers.
extension TokenEngineTests {
    @Test("a wall clock stepped backwards does not keep an expired token in use: the continuous clock says it expired")
    func wallClockSteppedBackwards() async {
        let engine = makeEngine()
        #expect(await request(engine, fetchingTokens(into: engine)) == .token("token-1"))
        // An hour later the token has expired; then NTP steps the wall clock back an hour.
        clock.advance(by: .seconds(3600))
        clock.stepWallClock(by: .seconds(-3600))
        #expect(engine.cachedToken() == nil)
        #expect(await request(engine, fetchingTokens(into: engine)) == .token("token-2"))
        #expect(fetchCount == 2)
    }

    @Test("a server rejecting every call: one fetch after the first rejection, then none until 30 s have passed")
    func rejectionsAreFloored() async {
        let engine = makeEngine()
        var answer = await request(engine, fetchingTokens(into: engine))
        // What the channel does for each call the server answers UNAUTHENTICATED: invalidate the
        // token it sent, then ask again.
        for _ in 0..<10 {
            guard case .token(let sent) = answer else { break }
            engine.invalidate(token: sent)
            answer = await request(engine, fetchingTokens(into: engine))
        }
        #expect(answer == .token("token-2"))
        #expect(fetchCount == 2, "\(fetchCount) fetches for 10 rejections")
        clock.advance(by: .seconds(30))
        engine.invalidate(token: "token-2")
        #expect(await request(engine, fetchingTokens(into: engine)) == .token("token-3"))
    }

    @Test(
        "a fetch that never answers is given up at the watchdog's bound: its waiter fails, a later request fetches anew"
    )
    func stuckFetchIsGivenUp() async throws {
        let engine = makeEngine()
        let never = Gate()
        defer { never.open() }
        let stuck: @Sendable (UInt64) async -> TokenEngine.Outcome = { [fetches] _ in
            fetches.withLock { $0 += 1 }
            await never.wait()
            return .token("late")
        }
        let waiter = Task { await request(engine, stuck) }
        // Once the fetch runs and its watchdog waits, move past the bound (2 minutes). Waited for
        // in real time: a fixed count of yields ran out before the watchdog slept under ASan on a
        // busy machine, and the clock then moved too early for it.
        try await eventually("the stuck fetch and its watchdog start", within: .seconds(20)) {
            fetchCount > 0 && clock.sleeperCount > 0
        }
        clock.advance(by: .seconds(121))
        let answer = await value(of: waiter, waitingAtMost: .seconds(20))
        guard case .failed(let message)? = answer else {
            Issue.record("the waiter got \(String(describing: answer)) (nil: still waiting after 20 s)")
            return
        }
        #expect(message.contains("did not finish within"), "\(message)")

        // After the backoff that failure started, a request starts a new fetch.
        clock.advance(by: .seconds(10))
        let later = Task { await request(engine, fetchingTokens(into: engine)) }
        let laterAnswer = await value(of: later, waitingAtMost: .seconds(20))
        #expect(laterAnswer == .token("token-2"), "\(String(describing: laterAnswer)) (nil: still waiting)")
        #expect(fetchCount == 2)
    }
}
