import Foundation
import OAuth2
import TestSupport
import Testing

/// Runs a blocking store call on a thread of its own, so a store waiting for another holder's
/// lock never blocks a thread of Swift's cooperative pool (which the refresh needs to finish).
func onThread<T: Sendable>(_ body: @escaping @Sendable () throws(OAuthError) -> T) async throws(OAuthError) -> T {
    let result: Result<T, OAuthError> = await withCheckedContinuation { continuation in
        Thread.detachNewThread {
            do throws(OAuthError) {
                continuation.resume(returning: .success(try body()))
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
    }
    return try result.get()
}

/// A sign-in or sign-out must not be undone by a refresh that was in flight when it happened,
/// in one process or across processes sharing the file store.
///
/// In one process the issuer holds the old grant's token request until the sign-in or sign-out
/// has changed the session's state, so the refresh is certainly in flight then however loaded the
/// machine is. (The session's own save waits for the refresh's lock, so the change is awaited in
/// a task of its own.) Across processes a sign-in or sign-out waits for the refresh's file lock
/// whatever the timing, so there the token endpoint is only made slow.
@Suite("Sign-in and sign-out during a refresh in flight")
struct StaleRefreshTests {
    static let delay = 2000

    /// Runs `change` while `client`'s token request is held at the issuer: waits (bounded) until
    /// the session's state shows it, then lets the request be answered, and returns once the
    /// change has finished.
    private func whileRequestIsHeld(
        _ issuer: SandboxIssuer,
        _ client: OAuthClient,
        _ session: AuthSession,
        change: @escaping @Sendable () async throws -> Void,
        visibleWhen shows: @escaping @Sendable (AuthState) -> Bool
    ) async throws {
        let changing = Task { try await change() }
        for _ in 0..<500 where !shows(await session.state) {
            try await Task.sleep(for: .milliseconds(20))
        }
        let shown = shows(await session.state)
        try await issuer.releaseTokenRequests(of: client)
        try await changing.value
        try #require(shown, "the change never showed in the session's state while the refresh was held")
    }

    @Test("replaceState while a refresh awaits the issuer: the old grant's answer does not land in the new state")
    func replaceStateDuringRefresh() async throws {
        let issuer = try await SandboxIssuer.shared()
        let oldClient = try await issuer.makeClient()
        let newClient = try await issuer.makeClient()
        let oldGrant = try await issuer.signIn(oldClient)
        let newGrant = try await issuer.signIn(newClient)
        let store = InMemoryAuthSessionStore()
        let session = AuthSession(state: expired(oldGrant), store: store)
        try await issuer.holdTokenRequests(of: oldClient)
        let before = try await issuer.counters(of: oldClient)["token_requests", default: 0]

        let refresh = Task { try await session.freshAccessToken() }
        try await issuer.waitForTokenRequests(of: oldClient, moreThan: before)
        try await whileRequestIsHeld(
            issuer,
            oldClient,
            session,
            change: { await session.replaceState(newGrant) },
            visibleWhen: { $0.refreshToken == newGrant.refreshToken }
        )
        let token = try await refresh.value

        #expect(token == newGrant.accessToken)
        let state = await session.state
        #expect(state.client == newClient)
        #expect(state.accessToken == newGrant.accessToken)
        #expect(state.refreshToken == newGrant.refreshToken)
        #expect(session.cachedToken() == newGrant.accessToken)
        #expect(try store.retrieve()?.refreshToken == newGrant.refreshToken)
    }

    @Test("the old grant's invalid_grant, arriving after a new sign-in, does not stop the new session")
    func oldInvalidGrantDoesNotStopNewSession() async throws {
        let issuer = try await SandboxIssuer.shared()
        let oldClient = try await issuer.makeClient()
        let newClient = try await issuer.makeClient()
        let oldGrant = try await issuer.signIn(oldClient)
        let newGrant = try await issuer.signIn(newClient)
        try await issuer.revokeEverything(of: oldClient)
        let store = InMemoryAuthSessionStore()
        let session = AuthSession(state: expired(oldGrant), store: store)
        try await issuer.holdTokenRequests(of: oldClient)
        let before = try await issuer.counters(of: oldClient)["token_requests", default: 0]

        let refresh = Task { try await session.freshAccessToken() }
        try await issuer.waitForTokenRequests(of: oldClient, moreThan: before)
        try await whileRequestIsHeld(
            issuer,
            oldClient,
            session,
            change: { await session.replaceState(newGrant) },
            visibleWhen: { $0.refreshToken == newGrant.refreshToken }
        )
        _ = await refresh.result

        let state = await session.state
        #expect(state.authorizationError == nil)
        #expect(state.refreshToken == newGrant.refreshToken)
        #expect(try store.retrieve()?.authorizationError == nil)
        #expect(try await session.freshAccessToken() == newGrant.accessToken)
    }

    @Test(
        "revoke() while a refresh awaits the issuer: the session stays signed out, without the old grant's invalid_grant"
    )
    func revokeDuringRefresh() async throws {
        let issuer = try await SandboxIssuer.shared()
        let client = try await issuer.makeClient()
        let grant = try await issuer.signIn(client)
        let store = InMemoryAuthSessionStore()
        let session = AuthSession(state: expired(grant), store: store)
        try await issuer.holdTokenRequests(of: client)
        let before = try await issuer.counters(of: client)["token_requests", default: 0]

        let refresh = Task { try await session.freshAccessToken() }
        try await issuer.waitForTokenRequests(of: client, moreThan: before)
        try await whileRequestIsHeld(
            issuer,
            client,
            session,
            change: { try await session.revoke() },
            visibleWhen: { $0.refreshToken == nil }
        )
        let outcome = await refresh.result

        #expect((outcome.failureValue as? OAuthError)?.kind == .noRefreshToken, "\(outcome)")
        let state = await session.state
        #expect(state.accessToken == nil && state.refreshToken == nil)
        #expect(state.authorizationError == nil)
        let stored = try #require(try store.retrieve())
        #expect(stored.refreshToken == nil && stored.authorizationError == nil)
        #expect(session.cachedToken() == nil)
    }

    @Test("a sign-in saved by another process while this one refreshes is not overwritten, and is adopted afterwards")
    func loginInAnotherProcessDuringRefresh() async throws {
        let issuer = try await SandboxIssuer.shared()
        let oldClient = try await issuer.makeClient()
        let newClient = try await issuer.makeClient()
        let oldGrant = try await issuer.signIn(oldClient)
        let newGrant = try await issuer.signIn(newClient)
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("session.json")
        // Two store values, two lock descriptors: two processes, as far as flock can tell.
        let refreshing = FileAuthSessionStore(fileURL: file)
        let signingIn = FileAuthSessionStore(fileURL: file)
        try refreshing.save(expired(oldGrant))
        let session = try #require(try AuthSession.restore(from: refreshing))
        try await issuer.tokenBehaviour(of: oldClient, delayMilliseconds: Self.delay)
        let before = try await issuer.counters(of: oldClient)["token_requests", default: 0]

        let refresh = Task { try await session.freshAccessToken() }
        try await issuer.waitForTokenRequests(of: oldClient, moreThan: before)
        try await onThread { () throws(OAuthError) in try signingIn.save(newGrant) }
        _ = await refresh.result

        let stored = try #require(try signingIn.retrieve())
        #expect(stored.client == newClient)
        #expect(stored.refreshToken == newGrant.refreshToken)
        // The refreshing process's next refresh adopts the new sign-in instead of renewing its old grant.
        try await issuer.tokenBehaviour(of: oldClient)
        let oldRequests = try await issuer.counters(of: oldClient)["token_requests", default: 0]
        await session.invalidate()
        #expect(try await session.freshAccessToken() == newGrant.accessToken)
        #expect(try await issuer.counters(of: oldClient)["token_requests", default: 0] == oldRequests)
        #expect(try signingIn.retrieve()?.refreshToken == newGrant.refreshToken)
    }

    @Test("a logout (remove) in another process while this one refreshes is not undone: the file stays gone")
    func logoutInAnotherProcessDuringRefresh() async throws {
        let issuer = try await SandboxIssuer.shared()
        let client = try await issuer.makeClient()
        let grant = try await issuer.signIn(client)
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("session.json")
        let refreshing = FileAuthSessionStore(fileURL: file)
        let loggingOut = FileAuthSessionStore(fileURL: file)
        try refreshing.save(expired(grant))
        let session = try #require(try AuthSession.restore(from: refreshing))
        try await issuer.tokenBehaviour(of: client, delayMilliseconds: Self.delay)
        let before = try await issuer.counters(of: client)["token_requests", default: 0]

        let refresh = Task { try await session.freshAccessToken() }
        try await issuer.waitForTokenRequests(of: client, moreThan: before)
        try await onThread { () throws(OAuthError) in try loggingOut.remove() }
        _ = await refresh.result

        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(try loggingOut.retrieve() == nil)
    }
}

extension Result {
    /// The error, or `nil` on success.
    var failureValue: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

@Suite("Session files written before grants had an identity")
struct LegacyGrantIdentityTests {
    /// `state` encoded as a version-1 file from before `grant.id` existed.
    static func legacyFile(_ state: AuthState) throws -> Data {
        var object = try #require(try JSONSerialization.jsonObject(with: state.encoded()) as? [String: Any])
        var grant = try #require(object["grant"] as? [String: Any])
        grant.removeValue(forKey: "id")
        object["grant"] = grant
        return try JSONSerialization.data(withJSONObject: object)
    }

    @Test("every reader of an old file derives the same grant identity, and a save keeps it")
    func oldFilesAgree() throws {
        let state = StoreFixtures.state()
        let data = try Self.legacyFile(state)
        #expect(!String(decoding: data, as: UTF8.self).contains(state.grant.id))
        let first = try AuthState(decoding: data)
        let second = try AuthState(decoding: data)
        #expect(first.grant.id == second.grant.id)
        #expect(first.grant.id == GrantRecord.legacyID(type: state.grant.type, date: state.grant.date))
        #expect(try AuthState(decoding: try first.encoded()).grant.id == first.grant.id)
    }

    @Test(
        "two processes refreshing a session from an old file at once: one refresh, both get its token, nothing dropped"
    )
    func oldFileRefreshesOnce() async throws {
        let issuer = try await SandboxIssuer.shared()
        let client = try await issuer.makeClient()
        let signedIn = try await issuer.signIn(client)
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("session.json")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Self.legacyFile(expired(signedIn)).write(to: file)
        let a = try #require(try AuthSession.restore(from: FileAuthSessionStore(fileURL: file)))
        let b = try #require(try AuthSession.restore(from: FileAuthSessionStore(fileURL: file)))
        let before = try await issuer.counters(of: client)["refresh_requests", default: 0]

        async let tokenA = a.freshAccessToken()
        async let tokenB = b.freshAccessToken()
        let (first, second) = try await (tokenA, tokenB)

        #expect(first == second)
        #expect(try await issuer.counters(of: client)["refresh_requests", default: 0] - before == 1)
        let stored = try #require(try FileAuthSessionStore(fileURL: file).retrieve())
        #expect(stored.accessToken == first)
        #expect(stored.grant.id == GrantRecord.legacyID(type: signedIn.grant.type, date: signedIn.grant.date))
    }
}

@Suite("Sign-out in another process before a refresh")
struct SignOutBeforeRefreshTests {
    @Test(
        "a session made from the stored state (as the CLI makes it) does not bring back a file another process removed"
    )
    func removedBeforeRefreshStaysRemoved() async throws {
        let issuer = try await SandboxIssuer.shared()
        let client = try await issuer.makeClient()
        let grant = try await issuer.signIn(client)
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("session.json")
        let calling = FileAuthSessionStore(fileURL: file)
        try calling.save(expired(grant))
        let session = AuthSession(state: try #require(try calling.retrieve()), store: calling)
        try FileAuthSessionStore(fileURL: file).remove()
        let before = try await issuer.counters(of: client)["token_requests", default: 0]

        let error = await #expect(throws: OAuthError.self) { try await session.freshAccessToken() }
        #expect(error?.kind == .noRefreshToken)
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(try await issuer.counters(of: client)["token_requests", default: 0] == before)
    }

    @Test(
        "a session made from a new sign-in keeps it even if the store still holds an older one, and saves it when it refreshes"
    )
    func newSignInIsNotReplacedByTheStoredOne() async throws {
        let issuer = try await SandboxIssuer.shared()
        let oldClient = try await issuer.makeClient()
        let newClient = try await issuer.makeClient()
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FileAuthSessionStore(fileURL: directory.appendingPathComponent("session.json"))
        try store.save(try await issuer.signIn(oldClient))
        let newGrant = try await issuer.signIn(newClient)
        let session = AuthSession(state: expired(newGrant), store: store)

        let token = try await session.freshAccessToken()
        #expect(token != newGrant.accessToken)
        #expect(await session.state.client == newClient)
        #expect(try store.retrieve()?.client == newClient)
        #expect(try store.retrieve()?.accessToken == token)
    }
}
