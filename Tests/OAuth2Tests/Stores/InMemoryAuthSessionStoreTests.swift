import AuthRPCSystem
import Testing

@testable import OAuth2

@Suite("InMemoryAuthSessionStore")
struct InMemoryAuthSessionStoreTests {
    @Test("save, retrieve and remove")
    func roundTrip() throws {
        let store = InMemoryAuthSessionStore()
        #expect(try store.retrieve() == nil)
        try store.save(StoreFixtures.state(scopes: ["a"]))
        #expect(try store.retrieve()?.scopes == ["a"])
        #expect(try store.retrieve()?.refreshToken == StoreFixtures.refreshToken)
        try store.save(StoreFixtures.state(scopes: ["b"]))
        #expect(try store.retrieve()?.scopes == ["b"])
        try store.remove()
        #expect(try store.retrieve() == nil)
        try store.remove()
        #expect(try InMemoryAuthSessionStore(StoreFixtures.state(scopes: ["c"])).retrieve()?.scopes == ["c"])
    }

    @Test("concurrent bodies run one at a time and lose no read-modify-write")
    func serializes() async throws {
        let store = InMemoryAuthSessionStore(StoreFixtures.state(scopes: []))
        let inside = Occupancy()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                group.addTask {
                    // The bound only ends a lost hand-off. The last of 20 waits for 19 hand-offs,
                    // each a trip through the cooperative pool: at the start of a parallel run on
                    // 2 cores that took over 20 s in CI.
                    try await store.withExclusiveAccess(timeout: .seconds(300)) { () async throws(OAuthError) in
                        inside.enter()
                        guard var state = try store.retrieve() else {
                            throw OAuthError(.storage, "the session vanished")
                        }
                        try? await Task.sleep(for: .milliseconds(2))
                        state.scopes.append("s\(index)")
                        try store.save(state)
                        inside.leave()
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(inside.maximum == 1)
        #expect(try store.retrieve()?.scopes.sorted() == (0..<20).map { "s\($0)" }.sorted())
    }

    @Test("a waiter gives up with a transient error after its timeout, and the lock still works")
    func timeout() async throws {
        let store = InMemoryAuthSessionStore()
        let waited = try await store.withExclusiveAccess(timeout: .seconds(5)) {
            () async throws(OAuthError) -> Duration in
            let start = ContinuousClock.now
            let error = await StoreFixtures.error { () async throws(OAuthError) in
                try await store.withExclusiveAccess(timeout: .milliseconds(100)) {
                    () async throws(OAuthError) -> Void in
                    Issue.record("entered while the lock was held")
                }
            }
            #expect(error?.kind == .transient)
            return ContinuousClock.now - start
        }
        #expect(waited >= .milliseconds(100))
        #expect(try await store.withExclusiveAccess(timeout: .zero) { () async throws(OAuthError) in true })
    }

    @Test("a zero timeout fails at once when the lock is held")
    func zeroTimeout() async throws {
        let store = InMemoryAuthSessionStore()
        try await store.withExclusiveAccess(timeout: .seconds(5)) { () async throws(OAuthError) in
            let error = await StoreFixtures.error { () async throws(OAuthError) in
                try await store.withExclusiveAccess(timeout: .zero) { () async throws(OAuthError) in }
            }
            #expect(error?.kind == .transient)
        }
    }

    @Test("the lock is released when the body throws")
    func releasedOnThrow() async throws {
        let store = InMemoryAuthSessionStore()
        do {
            try await store.withExclusiveAccess(timeout: .seconds(1)) { () async throws(OAuthError) in
                throw OAuthError(.flowFailed, "body failed")
            }
            Issue.record("expected the body's error")
        } catch {
            #expect(error.kind == .flowFailed)
        }
        #expect(try await store.withExclusiveAccess(timeout: .zero) { () async throws(OAuthError) in true })
    }

    @Test("a waiter cancelled while waiting gives up with a transient error and does not take the lock")
    func cancelledWaiter() async throws {
        let store = InMemoryAuthSessionStore()
        try await store.withExclusiveAccess(timeout: .seconds(5)) { () async throws(OAuthError) in
            let waiter = Task {
                await StoreFixtures.error { () async throws(OAuthError) in
                    try await store.withExclusiveAccess(timeout: .seconds(30)) { () async throws(OAuthError) in }
                }
            }
            try? await Task.sleep(for: .milliseconds(50))
            waiter.cancel()
            let error = await waiter.value
            #expect(error?.kind == .transient)
            #expect(error?.underlying is CancellationError)
        }
        #expect(try await store.withExclusiveAccess(timeout: .zero) { () async throws(OAuthError) in true })
    }
}

/// Counts the bodies running at once, and the most seen.
private final class Occupancy: Sendable {
    private let counts = Locked((current: 0, maximum: 0))

    var maximum: Int { counts.withLock { $0.maximum } }

    func enter() {
        counts.withLock {
            $0.current += 1
            $0.maximum = max($0.maximum, $0.current)
        }
    }

    func leave() {
        counts.withLock { $0.current -= 1 }
    }
}
