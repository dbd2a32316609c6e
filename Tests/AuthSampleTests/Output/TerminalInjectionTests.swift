import Foundation
import TestSupport
import Testing

/// Text from servers and issuers reaches the terminal only as printable text: escape sequences,
/// control characters and bidi controls are shown as visible escapes, long values are cut, and
/// `--json` stays valid JSON carrying the exact text with the same characters escaped.
@Suite("auth_sample shows peer text printably", .timeLimit(.minutes(3)))
struct TerminalInjectionTests {
    /// `call` against the fault server's HostileText scenario, anonymously over h2c.
    private func hostileCall(
        _ workspace: CLIWorkspace,
        failWith code: Int? = nil,
        json: Bool = false,
        _ more: [String] = []
    ) async throws -> CLIResult {
        let port = try await HostilePeers.faultServerPort()
        var arguments = [
            "call", "--plaintext", "--target", "127.0.0.1:\(port)", "--anonymous", "--metadata",
            "x-fault-scenario=HostileText",
        ]
        if let code { arguments += ["--metadata", "x-fault-code=\(code)"] }
        if json { arguments.append("--json") }
        return try await workspace.run(arguments + more)
    }

    @Test("a response's username, scope and metadata are shown escaped, long values cut, long lists shortened")
    func responseText() async throws {
        let workspace = try await CLIWorkspace.make()
        let result = try await hostileCall(workspace)

        #expect(result.status == 0, "\(result)")
        HostileText.expectPrintable(result)
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(
            lines.first == "Used scope: \(HostileText.shownText) on behalf of user \(HostileText.shownText)",
            "\(result)"
        )
        #expect(lines.dropFirst().first == "Credentials: none", "\(result)")
        let sections = CallTests.sections(lines)
        let headers = sections["Response headers"] ?? []
        let trailers = sections["Response trailers"] ?? []
        #expect(headers.contains("x-hostile: \(HostileText.shownFieldText)"), "\(result)")
        #expect(trailers.contains("x-hostile: \(HostileText.shownFieldText)"), "\(result)")
        // 5000 L and a U+202E: cut to the display limit, saying how much was left out.
        let long = headers.first { $0.hasPrefix("x-hostile-long: ") } ?? ""
        #expect(long.hasPrefix("x-hostile-long: " + String(repeating: "L", count: 900)), "\(result)")
        #expect(long.count < 1100 && long.hasSuffix(" more characters not shown)"), "\(result)")
        // grpc-status, the two fields and 100 repeated ones: the first 64, then how many more.
        #expect(trailers.count == 65, "\(result)")
        #expect(trailers.last == "… and 39 more (--json lists them all)", "\(result)")
        // Every line is one the tool writes: nothing else starts a line.
        let known = ["Used scope: ", "Credentials: ", "Response headers:", "Response trailers:", "  "]
        for line in lines.dropLast() {
            #expect(known.contains { line.hasPrefix($0) }, "unexpected line \(line.debugDescription):\n\(result)")
        }
        #expect(lines.last == "", "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
    }

    @Test("with --json the response is valid JSON with the exact text, control and bidi characters escaped")
    func responseJSON() async throws {
        let workspace = try await CLIWorkspace.make()
        let result = try await hostileCall(workspace, json: true)

        #expect(result.status == 0, "\(result)")
        HostileText.expectPrintable(result)
        #expect(result.stdout.split(separator: "\n").count == 1, "\(result)")
        let object = try #require(result.jsonObject, "not one JSON object:\n\(result)")
        let username = try #require(object["username"] as? String)
        #expect(
            username.contains("esc\u{1B}[2J\u{1B}[31mred") && username.contains("\r\n\(HostileText.forgedLine)\n\u{0}"),
            "\(result)"
        )
        #expect(
            username.contains(
                "c1\u{9B}31m\u{85} bidi\u{202E}gnp.exe\u{202C}\u{2066}iso\u{2069} sep\u{2028}\u{2029} tab\tend"
            ),
            "\(result)"
        )
        #expect(object["oauth_scope"] as? String == username)
        let trailers = try #require(object["trailers"] as? [[String]], "\(result)")
        #expect(
            trailers.contains(["x-hostile-long", String(repeating: "L", count: 5000) + "\u{202E}"]),
            "JSON keeps whole values"
        )
        #expect(trailers.filter { $0.first == "x-hostile-repeated" }.count == 100, "JSON keeps every entry")
    }

    @Test("a failed call's grpc-message and www-authenticate are shown escaped, on the tool's own lines")
    func statusText() async throws {
        let workspace = try await CLIWorkspace.make()
        let result = try await hostileCall(workspace, failWith: 16)

        #expect(result.status == 21, "\(result)")
        HostileText.expectPrintable(result)
        #expect(result.stdout.isEmpty, "\(result)")
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(result)")
        #expect(
            lines.first == "auth_sample: error: the server rejected the credentials: \(HostileText.shownText)",
            "\(result)"
        )
        #expect(lines.dropFirst().first == "gRPC status: UNAUTHENTICATED", "\(result)")
        #expect(
            lines.dropFirst(2).first == #"Server challenge: www-authenticate: Bearer realm=""#
                + HostileText.shownFieldText + #"", error="invalid_token""#,
            "\(result)"
        )
        #expect(lines.last?.hasPrefix("What to do: ") == true, "\(result)")

        let json = try await hostileCall(workspace, failWith: 16, json: true)
        #expect(json.status == 21, "\(json)")
        HostileText.expectPrintable(json)
        let object = try #require(json.jsonObject, "\(json)")
        #expect(
            (object["error"] as? String)?.hasSuffix("\r\n\(HostileText.forgedLine)\n\u{0}\(HostileText.forgedLine)")
                == true,
            "\(json)"
        )
        #expect((object["details"] as? [String])?.first?.contains("\u{202E}gnp.exe") == true, "\(json)")
    }

    @Test("GOAWAY debug data is shown escaped, in the error and in the --verbose log")
    func goawayText() async throws {
        let workspace = try await CLIWorkspace.make()
        let result = try await hostileCall(workspace, ["--metadata", "x-fault-goaway=1", "--verbose"])

        #expect(result.status != 0, "\(result)")
        HostileText.expectPrintable(result)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        let goaway = "server sent GOAWAY (ENHANCE_YOUR_CALM, \(HostileText.shownText))"
        #expect(lines.contains { $0.hasPrefix("auth_sample: error: ") && $0.contains(goaway) }, "\(result)")
        #expect(
            lines.contains { $0.contains(" debug auth_sample.channel: ") && $0.contains("reason=\(goaway)") },
            "\(result)"
        )
        #expect(result.stdout.isEmpty, "\(result)")
    }

    @Test("an issuer's user code, verification URI, ID-token email and error_description are shown escaped")
    func issuerText() async throws {
        let workspace = try await CLIWorkspace.make(sandbox: try await HostilePeers.hostileSandbox())

        let login = try await workspace.login()
        HostileText.expectPrintable(login)
        let loginLines = login.stdout.split(separator: "\n").map(String.init)
        let codeLine = loginLines.first { $0.hasPrefix("To sign in, open ") } ?? ""
        #expect(
            codeLine.contains(" and enter the code ") && codeLine.hasSuffix(HostileText.shownIssuerText),
            "\(login)"
        )
        #expect(
            loginLines.contains {
                $0.hasPrefix(
                    "Signed in as sandbox-user@example.com\(HostileText.shownIssuerText) (verified) with scopes: "
                )
            },
            "\(login)"
        )
        let known = [
            "To sign in, open ", "(or open ", "Waiting for you to approve", "  ", "Signed in as ",
            "Session 'default' saved to ",
        ]
        for line in loginLines {
            #expect(known.contains { line.hasPrefix($0) }, "unexpected line \(line.debugDescription):\n\(login)")
        }

        let status = try await workspace.run(["status"])
        #expect(status.status == 0, "\(status)")
        HostileText.expectPrintable(status)
        #expect(
            status.stdout.contains(
                "  User:          sandbox-user@example.com\(HostileText.shownIssuerText) (verified)\n"
            ),
            "\(status)"
        )
        let statusJSON = try await workspace.run(["status", "--json"])
        HostileText.expectPrintable(statusJSON)
        #expect(
            (statusJSON.jsonObject?["user_email"] as? String)?.contains("\u{1B}[2J\u{1B}[31m") == true,
            "\(statusJSON)"
        )

        try await workspace.issuer.revokeEverything(of: workspace.clientID)
        try workspace.expireStoredAccessToken()
        let call = try await workspace.run(["call"] + workspace.tls)
        #expect(call.status == 23, "\(call)")
        HostileText.expectPrintable(call)
        let lines = call.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(call)")
        #expect(
            lines.first?.hasSuffix("refused the grant: invalid_grant: \(HostileText.shownIssuerText)") == true,
            "\(call)"
        )
        // The session is stopped now: a new sign-in, refused the same way, for the JSON answer.
        try await workspace.login()
        try await workspace.issuer.revokeEverything(of: workspace.clientID)
        try workspace.expireStoredAccessToken()
        let callJSON = try await workspace.run(["call", "--json"] + workspace.tls)
        #expect(callJSON.status == 23, "\(callJSON)")
        HostileText.expectPrintable(callJSON)
        #expect(
            (callJSON.jsonObject?["error"] as? String)?.hasSuffix(
                "invalid_grant: \u{1B}[2J\u{1B}[31m\u{1B}]0;title\u{7}\u{9B}31m\u{202E}evil\u{202C}\u{2066}\u{2069}\u{2028}\u{7F}\u{8}\tend\r\n\(HostileText.forgedLine)\n\u{0}"
            ) == true,
            "\(callJSON)"
        )
    }
}
