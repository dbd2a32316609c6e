import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Signing in, looking at the stored session, and signing out, with the real `auth_sample`.
@Suite("auth_sample login, status and logout", .timeLimit(.minutes(3)))
struct LoginAndSessionTests {
    @Test("login --device shows the code, signs in and stores the session privately")
    func deviceLogin() async throws {
        let workspace = try await CLIWorkspace.make()
        let result = try await workspace.run(workspace.loginArguments)

        #expect(result.status == 0, "\(result)")
        let prefix = "To sign in, open \(workspace.sandbox.issuer)/device and enter the code "
        let line = result.stdout.split(separator: "\n").first { $0.hasPrefix(prefix) }
        let userCode = line.map { String($0.dropFirst(prefix.count)) } ?? ""
        #expect(
            userCode.count >= 4 && userCode.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" },
            "no verification URL and user code:\n\(result)"
        )
        #expect(result.stdout.contains("Signed in as \(workspace.sandbox.user)"), "\(result)")
        #expect(result.stdout.contains(workspace.sessionFile.path), "the message names the session file:\n\(result)")

        let file = try FileManager.default.attributesOfItem(atPath: workspace.sessionFile.path)
        let directory = try FileManager.default.attributesOfItem(
            atPath: workspace.sessionFile.deletingLastPathComponent().path
        )
        #expect((file[.posixPermissions] as? Int) == 0o600)
        #expect((directory[.posixPermissions] as? Int) == 0o700)
        let stored = try workspace.session()
        #expect((stored["client"] as? [String: Any])?["id"] as? String == workspace.clientID)
        #expect(stored["accessToken"] is String && stored["refreshToken"] is String)
    }

    @Test("status shows user and scopes but no token; logout --revoke removes the session and kills its refresh token")
    func statusThenLogoutWithRevoke() async throws {
        let workspace = try await CLIWorkspace.make()
        try await workspace.login()
        let sandbox = workspace.sandbox

        let text = try await workspace.run(["status"])
        #expect(text.status == 0, "\(text)")
        #expect(text.stdout.contains("User:          \(sandbox.user)"), "\(text)")
        #expect(text.stdout.contains("Client:        \(workspace.clientID)"), "\(text)")
        let scopesLine = text.stdout.split(separator: "\n").first { $0.contains("Scopes:") } ?? ""
        #expect(scopesLine.split(separator: " ").contains(Substring(sandbox.scope)), "\(text)")
        #expect(text.stdout.contains("Refresh token: present"), "\(text)")
        #expect(!text.stdout.contains("Stopped"), "\(text)")

        let json = try await workspace.run(["status", "--json"])
        #expect(json.status == 0, "\(json)")
        let object = try #require(json.jsonObject, "\(json)")
        #expect(object["user_email"] as? String == sandbox.user)
        #expect((object["scopes"] as? [String])?.contains(sandbox.scope) == true)
        #expect(object["client_id"] as? String == workspace.clientID)
        #expect(object["has_refresh_token"] as? Bool == true)
        #expect(object["access_token_fresh"] as? Bool == true)

        let oldRefreshToken = try #require(try workspace.storedRefreshToken())
        let logout = try await workspace.run(["logout", "--revoke"])
        #expect(logout.status == 0, "\(logout)")
        #expect(logout.stdout.contains("Revoked the grant at the issuer."), "\(logout)")
        #expect(logout.stdout.contains("Removed session 'default'"), "\(logout)")
        #expect(!FileManager.default.fileExists(atPath: workspace.sessionFile.path))

        let refresh = try await workspace.issuer.refreshDirectly(oldRefreshToken, clientID: workspace.clientID)
        #expect(refresh.status == 400, "the revoked refresh token still works (HTTP \(refresh.status))")
        #expect(refresh.body["error"] as? String == "invalid_grant")

        let after = try await workspace.run(["status"])
        #expect(after.status == 22, "\(after)")
    }

    @Test("a session file or directory open to others is used with a warning on stderr, like ssh's")
    func openSessionFileWarns() async throws {
        let workspace = try await CLIWorkspace.make()
        try await workspace.login()
        let file = workspace.sessionFile.path
        let directory = workspace.sessionFile.deletingLastPathComponent().path
        let fileWarning =
            "auth_sample: warning: the session file \(file) is open to others (mode 0644) and the session holds tokens; run: chmod 600 \(file)"
        let directoryWarning =
            "auth_sample: warning: the session directory \(directory) is open to others (mode 0750) and the session holds tokens; run: chmod 700 \(directory)"

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
        let status = try await workspace.run(["status"])
        #expect(status.status == 0, "\(status)")
        #expect(status.stdout.contains("Refresh token: present"), "\(status)")
        #expect(status.stderr == fileWarning + "\n", "\(status)")

        try FileManager.default.setAttributes([.posixPermissions: 0o750], ofItemAtPath: directory)
        let call = try await workspace.run(["call", "--json"] + workspace.tls)
        #expect(call.status == 0, "\(call)")
        #expect(call.jsonObject?["ok"] as? Bool == true, "\(call)")
        #expect(call.stderr == directoryWarning + "\n" + fileWarning + "\n", "\(call)")

        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory)
        let logout = try await workspace.run(["logout"])
        #expect(logout.status == 0, "\(logout)")
        #expect(logout.stderr == fileWarning + "\n", "\(logout)")

        try await workspace.login()
        let quiet = try await workspace.run(["status"])
        #expect(quiet.stderr.isEmpty, "a private session warns:\n\(quiet)")
    }

    @Test(
        "logout removes a session file it cannot read, saying so (and that it could not revoke it)",
        arguments: [false, true]
    )
    func logoutUnreadableSession(revoke: Bool) async throws {
        let workspace = try await CLIWorkspace.make()
        try workspace.writeSessionFile(Data("{\"version\": 1, \"accessToken\": ".utf8))

        let result = try await workspace.run(["logout"] + (revoke ? ["--revoke"] : []))

        #expect(result.status == 0, "\(result)")
        #expect(
            !FileManager.default.fileExists(atPath: workspace.sessionFile.path),
            "the unreadable session file is still there"
        )
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(result)")
        let warning = lines.first ?? ""
        #expect(
            warning.hasPrefix("auth_sample: warning: cannot read the stored session: \(workspace.sessionFile.path)"),
            "\(result)"
        )
        #expect(warning.hasSuffix("; removing it anyway"), "\(result)")
        #expect(warning.contains("could not be revoked at the issuer") == revoke, "\(result)")
        #expect(result.stdout == "Removed session 'default' (\(workspace.sessionFile.path)).\n", "\(result)")
    }

    @Test(
        "a FIFO at the session path: status fails at once naming it, logout removes it with a warning; neither waits for a writer (before: both hung in the read)"
    )
    func fifoSessionFile() async throws {
        let workspace = try await CLIWorkspace.make()
        try FileManager.default.createDirectory(
            at: workspace.sessionFile.deletingLastPathComponent(),
            withIntermediateDirectories: true
        )
        #expect(mkfifo(workspace.sessionFile.path, 0o600) == 0)

        let status = try await workspace.run(["status"])
        #expect(!status.timedOut, "\(status)")
        #expect(status.status != 0, "\(status)")
        #expect(status.stderr.contains("it is a FIFO, not a regular file"), "\(status)")

        let logout = try await workspace.run(["logout"])
        #expect(!logout.timedOut, "\(logout)")
        #expect(logout.status == 0, "\(logout)")
        #expect(logout.stderr.contains("it is a FIFO, not a regular file; removing it anyway"), "\(logout)")
        #expect(!FileManager.default.fileExists(atPath: workspace.sessionFile.path))
    }

    @Test("without a stored session every command exits 22 and says so", arguments: ["call", "status", "logout"])
    func noStoredSession(command: String) async throws {
        let workspace = try await CLIWorkspace.make()
        let arguments = command == "call" ? ["call"] + workspace.tls : [command]
        let result = try await workspace.run(arguments)

        #expect(result.status == 22, "\(result)")
        #expect(result.stderr.contains("no stored session"), "\(result)")
        #expect(result.stderr.contains("sign in first"), "\(result)")
        #expect(result.stdout.isEmpty, "\(result)")
        #expect(
            !FileManager.default.fileExists(atPath: workspace.sessionFile.path),
            "a failed \(command) created a session file"
        )
    }
}
