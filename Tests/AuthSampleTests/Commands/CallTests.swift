import Foundation
import TestSupport
import Testing

/// `auth_sample call` against the sandbox's TLS test service, with a stored session or a token.
@Suite("auth_sample call", .timeLimit(.minutes(3)))
struct CallTests {
    @Test("call prints the user and scope the server saw, then the response headers and trailers")
    func textOutput() async throws {
        let workspace = try await CLIWorkspace.make()
        try await workspace.login()
        let result = try await workspace.run(["call"] + workspace.tls)

        #expect(result.status == 0, "\(result)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let usedScope = lines.first { $0.hasPrefix("Used scope: ") } ?? ""
        #expect(usedScope.hasSuffix(" on behalf of user \(workspace.sandbox.user)"), "\(result)")
        #expect(usedScope.split(separator: " ").contains(Substring(workspace.sandbox.scope)), "\(result)")
        #expect(lines.contains { $0.hasPrefix("Credentials: session 'default'") }, "\(result)")
        let sections = Self.sections(lines)
        #expect(sections["Response headers"]?.contains("content-type: application/grpc") == true, "\(result)")
        #expect(sections["Response trailers"]?.contains("grpc-status: 0") == true, "\(result)")
    }

    @Test("call --json prints exactly one JSON object")
    func jsonOutput() async throws {
        let workspace = try await CLIWorkspace.make()
        try await workspace.login()
        let result = try await workspace.run(["call", "--json"] + workspace.tls)

        #expect(result.status == 0, "\(result)")
        let object = try #require(result.jsonObject, "\(result)")
        #expect(object["ok"] as? Bool == true)
        #expect(object["username"] as? String == workspace.sandbox.user)
        #expect(
            (object["oauth_scope"] as? String)?.split(separator: " ").contains(Substring(workspace.sandbox.scope))
                == true
        )
        #expect(object["credentials"] as? String == "session 'default'")
        #expect(object["token_refreshed"] as? Bool == false)
        let headers = try #require(object["headers"] as? [[String]], "\(result)")
        let trailers = try #require(object["trailers"] as? [[String]], "\(result)")
        #expect(headers.contains(["content-type", "application/grpc"]))
        #expect(trailers.contains(["grpc-status", "0"]))
        #expect(result.stderr.isEmpty, "\(result)")
    }

    @Test("--metadata is sent: the server echoes a text header and a -bin trailer")
    func customMetadata() async throws {
        let workspace = try await CLIWorkspace.make()
        let metadata = [
            "--metadata", "x-grpc-test-echo-initial=hello", "--metadata", "x-grpc-test-echo-trailing-bin=AAEC",
        ]
        let token = ["--token", SandboxFixture.staticToken]

        let text = try await workspace.run(["call"] + metadata + workspace.tls + token)
        #expect(text.status == 0, "\(text)")
        let sections = Self.sections(text.stdout.split(separator: "\n").map(String.init))
        #expect(sections["Response headers"]?.contains("x-grpc-test-echo-initial: hello") == true, "\(text)")
        #expect(sections["Response trailers"]?.contains("x-grpc-test-echo-trailing-bin: AAEC") == true, "\(text)")

        let json = try await workspace.run(["call", "--json"] + metadata + workspace.tls + token)
        #expect(json.status == 0, "\(json)")
        let object = try #require(json.jsonObject, "\(json)")
        #expect((object["headers"] as? [[String]])?.contains(["x-grpc-test-echo-initial", "hello"]) == true, "\(json)")
        #expect(
            (object["trailers"] as? [[String]])?.contains(["x-grpc-test-echo-trailing-bin", "AAEC"]) == true,
            "\(json)"
        )
        #expect(object["credentials"] as? String == "--token")
    }

    /// The indented lines under each `Title:` line of the text output.
    static func sections(_ lines: [String]) -> [String: [String]] {
        var sections: [String: [String]] = [:]
        var current: String?
        for line in lines {
            if line.hasPrefix("  "), let title = current {
                sections[title, default: []].append(String(line.dropFirst(2)))
            } else if line.hasSuffix(":"), !line.hasPrefix(" ") {
                current = String(line.dropLast())
                sections[current!] = []
            } else {
                current = nil
            }
        }
        return sections
    }
}
