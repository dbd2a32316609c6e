import Foundation
import TestSupport
import Testing

/// interop_client when the token endpoint refuses the key: the sandbox key's account and token
/// endpoint with another private key, so the JWT bearer grant's signature does not verify and the
/// sandbox issuer answers `invalid_grant`, as Google's does for a deleted key.
@Suite("interop_client when the token endpoint refuses the key")
struct InteropClientRefusedTokenTests {
    @Test("a case that fetches its token first stops before any call (exit 2), naming the refusal")
    func fetchedTokenRefused() async throws {
        let server = try await InteropServer.shared.value
        let keyFile = try await Self.keyWithAnotherPrivateKey(server)
        defer { try? FileManager.default.removeItem(atPath: keyFile) }
        let result = try await InteropServer.run(
            server.flags(.tls) + [
                "--test_case=oauth2_auth_token", "--service_account_key_file=\(keyFile)",
                "--oauth_scope=\(InteropServer.scope)",
            ]
        )
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        #expect(
            result.stderr.contains("oauth2_auth_token could not start: cannot fetch the access token"),
            "\(result.stderr)"
        )
        #expect(result.stderr.contains("invalid_grant"), "\(result.stderr)")
        #expect(!result.stdout.contains("passed"))
    }

    @Test("a case whose calls ask for the token fails its call UNAUTHENTICATED (exit 1), naming the refusal")
    func perCallTokenRefused() async throws {
        let server = try await InteropServer.shared.value
        let keyFile = try await Self.keyWithAnotherPrivateKey(server)
        defer { try? FileManager.default.removeItem(atPath: keyFile) }
        let result = try await InteropServer.run(
            server.flags(.tls) + [
                "--test_case=service_account_creds", "--service_account_key_file=\(keyFile)",
                "--oauth_scope=\(InteropServer.scope)",
            ]
        )
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("service_account_creds FAILED: "), "\(result.stderr)")
        #expect(result.stderr.contains("UNAUTHENTICATED"), "\(result.stderr)")
        #expect(result.stderr.contains("invalid_grant"), "\(result.stderr)")
        #expect(!result.stdout.contains("passed"))
    }

    /// The sandbox's key file with a fresh RSA key in place of its own: every other field (the
    /// account, the key id, the token endpoint) is the one the issuer knows.
    private static func keyWithAnotherPrivateKey(_ server: InteropServer) async throws -> String {
        let generated = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/openssl"),
            ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"]
        )
        try #require(generated.status == 0, "openssl genpkey: \(generated.stderr)")
        let original = try Data(contentsOf: URL(fileURLWithPath: server.keyFile))
        var key = try #require(try JSONSerialization.jsonObject(with: original) as? [String: Any])
        #expect(key["private_key"] as? String != generated.stdout)
        key["private_key"] = generated.stdout
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("refused-key-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: key).write(to: path, options: .atomic)
        return path.path
    }
}
