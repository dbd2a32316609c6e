import AuthRPC
import AuthSampleService
import Foundation
import OAuth2
import TestSupport
import Testing

@Suite("GTMOAuth2 migration against the sandbox issuer")
struct GTMOAuth2MigrationIssuerTests {
    @Test("a migrated GTMOAuth2 item refreshes on first use (with the old client's secret) and calls the service")
    func migratedSessionRefreshesOnFirstUse() async throws {
        let issuer = try await SandboxIssuer.shared()
        let oldClient = try await issuer.makeClient(confidential: true)
        let signedIn = try await issuer.signIn(oldClient)
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }

        // What GTMOAuth2 left in the keychain: tokens, scope and identity, no expiry.
        let old = GTMOAuth2Format.encode(
            GTMOAuth2Item(
                state: signedIn,
                serviceProvider: "Sandbox",
                userID: "sandbox-user",
                userEmail: issuer.sandbox.user,
                userEmailIsVerified: true
            )
        )
        let oldFile = directory.appendingPathComponent("gtm-oauth2.txt")
        try Data(old.utf8).write(to: oldFile)
        let store = FileAuthSessionStore(fileURL: directory.appendingPathComponent("migrated.json"))

        let item = try #require(
            try GTMOAuth2Migration.migrate(
                from: GTMOAuth2FileSource(fileURL: oldFile),
                client: oldClient,
                configuration: issuer.configuration,
                to: store
            )
        )
        #expect(item.userEmail == issuer.sandbox.user)
        #expect(!FileManager.default.fileExists(atPath: oldFile.path), "the old item is removed after the save")

        let session = try #require(try AuthSession.restore(from: store))
        #expect(session.cachedToken() == nil, "a migrated session has no expiry, so it starts stale")
        let before = try await issuer.counters(of: oldClient)["refresh_requests", default: 0]
        let response = try await issuer.whoAmI(
            on: try issuer.channel(),
            options: CallOptions(credentials: .provider(session))
        )
        #expect(response.username == issuer.sandbox.user)
        #expect(try await issuer.counters(of: oldClient)["refresh_requests", default: 0] - before == 1)
        let saved = try #require(try store.retrieve())
        #expect(saved.refreshToken != signedIn.refreshToken, "the rotated refresh token was saved")
        #expect(saved.isAccessTokenFresh())
    }
}
