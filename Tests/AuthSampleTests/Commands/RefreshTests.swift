import Foundation
import TestSupport
import Testing

/// An expired access token in the stored session: refreshed once, rotation persisted, shared
/// between processes, and a revoked grant reported as "sign in again".
@Suite("auth_sample call refreshing the stored session", .timeLimit(.minutes(3)))
struct RefreshTests {
    @Test("an expired access token is refreshed once and the rotated refresh token is saved")
    func expiredAccessTokenIsRefreshed() async throws {
        let workspace = try await CLIWorkspace.make()
        try await workspace.login()
        let oldAccessToken = try workspace.storedAccessToken()
        let oldRefreshToken = try #require(try workspace.storedRefreshToken())
        try workspace.expireStoredAccessToken()
        let before = try await workspace.issuer.refreshRequests(of: workspace.clientID)

        let result = try await workspace.run(["call", "--json"] + workspace.tls)

        #expect(result.status == 0, "\(result)")
        let object = try #require(result.jsonObject, "\(result)")
        #expect(object["token_refreshed"] as? Bool == true, "\(result)")
        #expect(object["username"] as? String == workspace.sandbox.user)
        #expect(try await workspace.issuer.refreshRequests(of: workspace.clientID) == before + 1)
        let newRefreshToken = try workspace.storedRefreshToken()
        #expect(newRefreshToken != nil && newRefreshToken != oldRefreshToken, "the rotated refresh token was not saved")
        #expect(try workspace.storedAccessToken() != oldAccessToken)

        // The saved token is used as it is by the next process.
        let again = try await workspace.run(["call", "--json"] + workspace.tls)
        #expect(again.status == 0, "\(again)")
        #expect(again.stdout.contains("\"token_refreshed\":false"), "\(again)")
        #expect(try await workspace.issuer.refreshRequests(of: workspace.clientID) == before + 1)
    }

    @Test("two processes on one expired session refresh once between them")
    func concurrentProcessesRefreshOnce() async throws {
        let workspace = try await CLIWorkspace.make()
        try await workspace.login()
        let oldRefreshToken = try #require(try workspace.storedRefreshToken())
        try workspace.expireStoredAccessToken()
        let before = try await workspace.issuer.refreshRequests(of: workspace.clientID)

        async let first = workspace.run(["call", "--json"] + workspace.tls)
        async let second = workspace.run(["call", "--json"] + workspace.tls)
        let results = try await [first, second]

        for result in results {
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout.contains("\"ok\":true"), "\(result)")
        }
        #expect(results.contains { $0.stdout.contains("\"token_refreshed\":true") }, "neither process saw the refresh")
        #expect(
            try await workspace.issuer.refreshRequests(of: workspace.clientID) == before + 1,
            "the issuer counted more than one refresh: the rotated refresh token was spent twice"
        )
        let newRefreshToken = try workspace.storedRefreshToken()
        #expect(newRefreshToken != nil && newRefreshToken != oldRefreshToken)
    }

    @Test("a revoked session exits 23, asks to sign in again, keeps the file, and status shows it stopped")
    func revokedSession() async throws {
        let workspace = try await CLIWorkspace.make()
        try await workspace.login()
        try await workspace.issuer.revokeEverything(of: workspace.clientID)
        try workspace.expireStoredAccessToken()

        let result = try await workspace.run(["call"] + workspace.tls)

        #expect(result.status == 23, "\(result)")
        #expect(result.stderr.contains("can no longer get tokens"), "\(result)")
        #expect(result.stderr.contains("sign in again"), "\(result)")
        #expect(result.stdout.isEmpty, "\(result)")
        #expect(FileManager.default.fileExists(atPath: workspace.sessionFile.path), "the session file was removed")

        let status = try await workspace.run(["status"])
        #expect(status.status == 0, "\(status)")
        #expect(status.stdout.contains("Stopped:"), "\(status)")
        let accessToken = status.stdout.split(separator: "\n").first { $0.hasPrefix("  Access token:") } ?? ""
        #expect(
            accessToken == "  Access token:  unusable: the session was stopped (invalid_grant); sign in again",
            "\(status)"
        )
        #expect(!status.stdout.contains("the next call refreshes it"), "\(status)")
    }

    @Test("an expired session without a refresh token: status says to sign in again, and call exits 23")
    func expiredWithoutRefreshToken() async throws {
        let workspace = try await CLIWorkspace.make()
        try await workspace.login()
        try workspace.expireStoredAccessToken()
        try workspace.rewriteSession { $0.removeValue(forKey: "refreshToken") }

        let status = try await workspace.run(["status"])
        #expect(status.status == 0, "\(status)")
        let accessToken = status.stdout.split(separator: "\n").first { $0.hasPrefix("  Access token:") } ?? ""
        #expect(accessToken.hasSuffix(" and there is no refresh token; sign in again"), "\(status)")
        #expect(!status.stdout.contains("the next call refreshes it"), "\(status)")

        let call = try await workspace.run(["call"] + workspace.tls)
        #expect(call.status == 23, "\(call)")
        #expect(call.stderr.contains("no refresh token"), "\(call)")
    }
}
