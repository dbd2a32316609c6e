import Foundation
import TestSupport
import Testing

/// One exit code per failure class, each with a message that says what was wrong.
@Suite("auth_sample call exit codes", .timeLimit(.minutes(3)))
struct ExitCodeTests {
    /// A call that must fail, how, and why.
    enum Failure: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case unknownHost, refusedPort, untrustedCertificate, hostnameMismatch, tokenOverPlaintext
        case metadataWithoutValue, metadataWithBadKey, wrongToken

        var testDescription: String { rawValue }

        static let wrongTokenValue = "wrong-token-\(UInt64.random(in: 1...UInt64.max))"

        func arguments(_ workspace: CLIWorkspace) -> [String] {
            let sandbox = workspace.sandbox
            switch self {
            case .unknownHost: return ["--target", "no-such-host.invalid:443", "--token", "x"]
            case .refusedPort: return ["--target", "127.0.0.1:\(Ports.closed())", "--token", "x"]
            case .untrustedCertificate: return ["--target", "localhost:\(sandbox.tlsPort)", "--token", "x"]
            case .hostnameMismatch: return workspace.tls + ["--authority", "wrong.example.com", "--token", "x"]
            case .tokenOverPlaintext:
                return ["--plaintext", "--target", "127.0.0.1:\(sandbox.plaintextPort)", "--token", "x"]
            case .metadataWithoutValue: return workspace.tls + ["--metadata", "novalue", "--token", "x"]
            case .metadataWithBadKey: return workspace.tls + ["--metadata", "Bad-Key=1", "--token", "x"]
            case .wrongToken: return workspace.tls + ["--token", Self.wrongTokenValue]
            }
        }

        var status: Int32 {
            switch self {
            case .unknownHost: 10
            case .refusedPort: 11
            case .untrustedCertificate: 12
            case .hostnameMismatch: 13
            case .tokenOverPlaintext: 20
            case .metadataWithoutValue, .metadataWithBadKey: 64
            case .wrongToken: 21
            }
        }

        /// The gRPC status the failed call ended with; `nil` when the tool refused before calling.
        var code: String? {
            switch self {
            case .unknownHost, .refusedPort, .untrustedCertificate, .hostnameMismatch: "UNAVAILABLE"
            case .wrongToken: "UNAUTHENTICATED"
            case .tokenOverPlaintext, .metadataWithoutValue, .metadataWithBadKey: nil
            }
        }

        /// What stderr must say.
        var messages: [String] {
            switch self {
            case .unknownHost: ["cannot find the host of no-such-host.invalid:443"]
            case .refusedPort: ["cannot connect to 127.0.0.1:", "connection refused"]
            case .untrustedCertificate: ["certificate is not trusted", "--ca-cert"]
            case .hostnameMismatch: ["not valid for this name", "wrong.example.com"]
            case .tokenOverPlaintext:
                ["refusing to send an access token over a plaintext connection", "--allow-insecure-credentials"]
            case .metadataWithoutValue: ["--metadata 'novalue' is not of the form key=value"]
            case .metadataWithBadKey: ["invalid metadata key 'Bad-Key'", "lowercase"]
            case .wrongToken:
                [
                    "the server rejected the credentials",
                    #"www-authenticate: Bearer realm="sandbox", error="invalid_token""#,
                ]
            }
        }
    }

    @Test("a failing call exits with its class's code and explains itself", arguments: Failure.allCases)
    func failingCall(_ failure: Failure) async throws {
        let workspace = try await CLIWorkspace.make()
        let result = try await workspace.run(
            ["call"] + failure.arguments(workspace),
            extraSecrets: ["the wrong token": Failure.wrongTokenValue]
        )

        #expect(result.status == failure.status, "\(result)")
        #expect(result.stderr.hasPrefix("auth_sample: error: "), "\(result)")
        for message in failure.messages {
            #expect(result.stderr.contains(message), "missing \"\(message)\":\n\(result)")
        }
        let statusLine = result.stderr.split(separator: "\n").dropFirst().first
        if let code = failure.code {
            #expect(statusLine == "gRPC status: \(code)", "the status is not on the second line:\n\(result)")
        } else {
            #expect(!result.stderr.contains("gRPC status:"), "\(result)")
        }
        #expect(result.stdout.isEmpty, "\(result)")
    }

    @Test(
        "with --json a failed call names its gRPC status as code",
        arguments: Failure.allCases.filter { $0.code != nil }
    )
    func failingCallCodeAsJSON(_ failure: Failure) async throws {
        let workspace = try await CLIWorkspace.make()
        let result = try await workspace.run(
            ["call", "--json"] + failure.arguments(workspace),
            extraSecrets: ["the wrong token": Failure.wrongTokenValue]
        )

        #expect(result.status == failure.status, "\(result)")
        let object = try #require(result.jsonObject, "\(result)")
        #expect(object["code"] as? String == failure.code, "\(result)")
        #expect(object["exit_code"] as? Int == Int(failure.status))
    }

    /// A file named on the command line that holds far too much.
    enum OversizedFile: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case tokenFile, caCertificate, devZeroTokenFile

        var testDescription: String { rawValue }
    }

    @Test(
        "--token-file and --ca-cert naming far too much (a huge file) or a device (/dev/zero) are usage errors",
        arguments: OversizedFile.allCases
    )
    func oversizedFile(_ file: OversizedFile) async throws {
        let workspace = try await CLIWorkspace.make()
        let big = workspace.configHome.appendingPathComponent("big")
        let arguments: [String]
        let message: String
        switch file {
        case .tokenFile:
            try Data(repeating: UInt8(ascii: "a"), count: 1 << 20).write(to: big)
            arguments = workspace.tls + ["--token-file", big.path]
            message = "--token-file \(big.path) holds more than 64 KiB, too much for an access token"
        case .caCertificate:
            try Data(repeating: UInt8(ascii: "-"), count: 5 << 20).write(to: big)
            arguments = ["--target", "localhost:\(workspace.sandbox.tlsPort)", "--ca-cert", big.path, "--token", "x"]
            message = "--ca-cert \(big.path) holds more than 4096 KiB, too much for CA certificates"
        case .devZeroTokenFile:
            arguments = workspace.tls + ["--token-file", "/dev/zero"]
            message =
                "cannot read --token-file /dev/zero: it is a character device, not a regular file\nWhat to do: to pass a token from another program, set $AUTH_SAMPLE_ACCESS_TOKEN"
        }
        let result = try await workspace.run(["call"] + arguments)

        #expect(result.status == 64, "\(result)")
        #expect(result.stderr == "auth_sample: error: \(message)\n", "\(result)")
        #expect(result.stdout.isEmpty, "\(result)")
    }

    @Test("with --json a failure is one JSON object on stdout carrying the exit code")
    func failureAsJSON() async throws {
        let workspace = try await CLIWorkspace.make()
        let result = try await workspace.run(
            ["call", "--json"] + Failure.wrongToken.arguments(workspace),
            extraSecrets: ["the wrong token": Failure.wrongTokenValue]
        )

        #expect(result.status == 21, "\(result)")
        let object = try #require(result.jsonObject, "\(result)")
        #expect(object["ok"] as? Bool == false)
        #expect(object["exit_code"] as? Int == 21)
        #expect(
            (object["details"] as? [String])?.contains { $0.contains("www-authenticate: Bearer") } == true,
            "\(result)"
        )
    }

    @Test("--plaintext with --allow-insecure-credentials sends the token and succeeds")
    func tokenOverPlaintextWithConsent() async throws {
        let workspace = try await CLIWorkspace.make()
        let result = try await workspace.run([
            "call", "--plaintext", "--allow-insecure-credentials",
            "--target", "127.0.0.1:\(workspace.sandbox.plaintextPort)", "--token", SandboxFixture.staticToken,
        ])

        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("on behalf of user \(workspace.sandbox.user)"), "\(result)")
    }
}
