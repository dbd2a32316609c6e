import AuthRPCSystem
import Foundation
import Testing

@testable import OAuth2

@Suite("GTMOAuth2Migration")
final class GTMOAuth2MigrationTests {
    let root = StoreFixtures.temporaryDirectory()
    let oldClient = OAuthClient(id: "old-client.apps.googleusercontent.com", secret: "old-secret")
    let oldString =
        "access_token=ya29.abc&email=user%40example.com&isVerified=1&refresh_token=1%2Fxyz&scope=https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fxapi.zoo&serviceProvider=Google&userID=12345"

    deinit {
        try? FileManager.default.removeItem(at: root)
    }

    /// A file holding the old string, as an app on Linux would have kept it.
    func oldItemFile() throws -> URL {
        let url = root.appendingPathComponent("gtm-oauth2-item")
        try Data((oldString + "\n").utf8).write(to: url)
        return url
    }

    @Test("the old item is read with the old client, saved to the store in the new format, then removed")
    func migrates() throws {
        let oldFile = try oldItemFile()
        let store = try FileAuthSessionStore(name: "migrated", environment: ["XDG_CONFIG_HOME": root.path])
        let item = try #require(
            try GTMOAuth2Migration.migrate(from: GTMOAuth2FileSource(fileURL: oldFile), client: oldClient, to: store)
        )
        #expect(item.userEmail == "user@example.com")
        #expect(item.userID == "12345")

        let saved = try #require(try store.retrieve())
        #expect(saved.refreshToken == "1/xyz")
        #expect(saved.client == oldClient)
        #expect(saved.grant.type == .gtmOAuth2Migration)
        #expect(saved.isAccessTokenStale)
        #expect(saved.effectiveScopes == [ServiceConfiguration.googleTestScope])
        #expect(try Data(contentsOf: store.fileURL) == item.state.encoded())
        #expect(!FileManager.default.fileExists(atPath: oldFile.path))
    }

    @Test("with no old item the result is nil and nothing changes")
    func nothingToMigrate() throws {
        let store = InMemoryAuthSessionStore(StoreFixtures.state(scopes: ["existing"]))
        let missing = root.appendingPathComponent("absent")
        let result = try GTMOAuth2Migration.migrate(
            from: GTMOAuth2FileSource(fileURL: missing),
            client: oldClient,
            to: store
        )
        #expect(result == nil)
        #expect(try store.retrieve()?.scopes == ["existing"])
        #expect(!FileManager.default.fileExists(atPath: missing.path))
    }

    @Test("when the save fails the old item stays")
    func saveFails() throws {
        let oldFile = try oldItemFile()
        let before = try Data(contentsOf: oldFile)
        do {
            try GTMOAuth2Migration.migrate(
                from: GTMOAuth2FileSource(fileURL: oldFile),
                client: oldClient,
                to: FailingStore()
            )
            Issue.record("expected the save's error")
        } catch {
            #expect(error.message == FailingStore.message)
        }
        #expect(try Data(contentsOf: oldFile) == before)
    }

    @Test("an old item that does not decode changes nothing")
    func undecodable() throws {
        let source = MemorySource("access_token=only")
        let store = InMemoryAuthSessionStore()
        #expect(throws: OAuthError.self) {
            try GTMOAuth2Migration.migrate(from: source, client: self.oldClient, to: store)
        }
        #expect(source.text != nil)
        #expect(try store.retrieve() == nil)
    }

    @Test("when the old item cannot be removed, the error says the new session was saved")
    func removeFails() throws {
        let source = MemorySource(oldString, removeFails: true)
        let store = InMemoryAuthSessionStore()
        do {
            try GTMOAuth2Migration.migrate(from: source, client: oldClient, to: store)
            Issue.record("expected an error")
        } catch {
            #expect(error.kind == .storage)
            #expect(error.message.contains("saved") && error.message.contains("remains"))
        }
        #expect(try store.retrieve()?.refreshToken == "1/xyz")
        #expect(source.text != nil)
    }

    @Test("the file source: a missing file is nil, surrounding whitespace is ignored, removing twice is fine")
    func fileSource() throws {
        let source = GTMOAuth2FileSource(fileURL: try oldItemFile())
        #expect(try source.read() == oldString)
        try source.remove()
        #expect(try source.read() == nil)
        try source.remove()
    }
}

/// A store whose save always fails.
private struct FailingStore: AuthSessionStore {
    static let message = "simulated save failure"
    func save(_ state: AuthState) throws(OAuthError) { throw OAuthError(.storage, Self.message) }
    func retrieve() throws(OAuthError) -> AuthState? { nil }
    func remove() throws(OAuthError) {}
}

/// An old item held in memory, whose removal can be made to fail.
private final class MemorySource: GTMOAuth2ItemSource {
    private let stored: Locked<String?>
    private let removeFails: Bool

    init(_ text: String, removeFails: Bool = false) {
        stored = Locked(text)
        self.removeFails = removeFails
    }

    var text: String? { stored.withLock { $0 } }

    func read() throws(OAuthError) -> String? { text }

    func remove() throws(OAuthError) {
        if removeFails { throw OAuthError(.storage, "simulated removal failure") }
        stored.withLock { $0 = nil }
    }
}
