import Foundation
import TestSupport
import Testing

/// What interop_client says before it calls anything: help, unknown cases, bad flags.
@Suite("interop_client's command line")
struct InteropClientUsageTests {
    @Test("--help lists every supported case and says the streaming cases are out of scope")
    func help() async throws {
        let result = try await InteropServer.run(["--help"])
        #expect(result.status == 0)
        for name in [
            "empty_unary", "client_compressed_unary", "rpc_soak", "jwt_token_creds", "google_default_credentials",
        ] {
            #expect(result.stdout.contains("\(name): "), "\(name)")
        }
        #expect(result.stdout.contains("Out of scope: the streaming cases"))
        #expect(result.stdout.contains("ping_pong"))
    }

    @Test("An unknown case is a usage error that lists the supported ones; a streaming case says it is out of scope")
    func unknownCase() async throws {
        let unknown = try await InteropServer.run(["--test_case=no_such_case"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("unknown test case 'no_such_case'; supported: empty_unary, large_unary"))
        let streaming = try await InteropServer.run(["--test_case=ping_pong"])
        #expect(streaming.status == 64)
        #expect(streaming.stderr.contains("'ping_pong' (a streaming case: out of scope)"))
    }

    @Test("Booleans take gRPC's spellings; anything else is a usage error")
    func booleans() async throws {
        let result = try await InteropServer.run(["--use_tls=yes", "--test_case=empty_unary"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("'yes' is not a boolean"))
    }

    @Test("An auth case without TLS, or a test CA without its file, is refused before any call")
    func refusedCombinations() async throws {
        let plaintext = try await InteropServer.run(["--test_case=jwt_token_creds", "--use_tls=false"])
        #expect(plaintext.status == 64)
        #expect(plaintext.stderr.contains("jwt_token_creds sends credentials: it needs --use_tls=true"))
        let noFile = try await InteropServer.run(["--use_tls=true", "--use_test_ca=true"])
        #expect(noFile.status == 64)
        #expect(noFile.stderr.contains("--use_test_ca=true needs --ca_file"))
    }

    @Test("A key file that cannot be read stops the case before it calls (exit 2)")
    func unreadableKey() async throws {
        let server = try await InteropServer.shared.value
        let result = try await InteropServer.run(
            server.flags(.tls) + ["--test_case=jwt_token_creds", "--service_account_key_file=/nonexistent/key.json"]
        )
        #expect(result.status == 2, "\(result.stderr)")
        #expect(
            result.stderr.contains(
                "jwt_token_creds could not start: cannot use the service account key /nonexistent/key.json"
            )
        )
    }
}
