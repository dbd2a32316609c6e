import Foundation
import TestSupport
import Testing

/// interop_client, the built executable, against the sandbox's interop server on grpcio: every
/// supported case passes over plaintext and TLS (the auth cases over TLS, with the sandbox's
/// issuer, metadata emulator and key), and each fails, naming what it expected and what it saw,
/// when the server breaks the rule the case checks (`x-sandbox-fault`).
@Suite("interop_client against grpcio's interop server")
struct InteropClientTests {
    /// Soak runs here allow for a loaded machine: the latency rule has tests of its own below.
    static let patientSoak = [
        "--soak_per_iteration_max_acceptable_latency_ms=60000", "--soak_overall_timeout_seconds=120",
    ]

    static let unaryCases = [
        "empty_unary", "large_unary", "client_compressed_unary", "server_compressed_unary", "custom_metadata",
        "status_code_and_message", "special_status_message", "unimplemented_method", "unimplemented_service",
        "pick_first_unary", "rpc_soak", "channel_soak",
    ]

    static let passing: [InteropScenario] =
        unaryCases.flatMap { name in
            [InteropServer.Transport.plaintext, .tls].map {
                InteropScenario(testCase: name, transport: $0, extra: name.hasSuffix("_soak") ? patientSoak : [])
            }
        } + [
            InteropScenario(testCase: "compute_engine_creds", transport: .tls, credentials: .metadata),
            InteropScenario(testCase: "service_account_creds", transport: .tls, credentials: .keyWithScope),
            InteropScenario(testCase: "jwt_token_creds", transport: .tls, credentials: .key),
            InteropScenario(testCase: "oauth2_auth_token", transport: .tls, credentials: .keyWithScope),
            InteropScenario(testCase: "oauth2_auth_token", transport: .tls, credentials: .metadata),
            InteropScenario(testCase: "per_rpc_creds", transport: .tls, credentials: .keyWithScope),
            InteropScenario(testCase: "per_rpc_creds", transport: .tls, credentials: .key),
            InteropScenario(testCase: "google_default_credentials", transport: .tls, credentials: .adcKey),
            InteropScenario(testCase: "google_default_credentials", transport: .tls, credentials: .adcMetadata),
            InteropScenario(testCase: "compute_engine_channel_credentials", transport: .tls, credentials: .metadata),
        ]

    @Test("Each case passes", arguments: passing)
    func passes(_ scenario: InteropScenario) async throws {
        let server = try await InteropServer.shared.value
        let (arguments, environment) = scenario.invocation(server)
        let result = try await InteropServer.run(arguments, environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasSuffix("\(scenario.testCase): passed\n"), "\(result.stdout)")
    }

    /// Each case against a server that breaks its rule, and the words its failure must hold.
    static let failing: [(InteropScenario, String)] = [
        (.init(testCase: "empty_unary", transport: .plaintext, fault: "nonempty-empty"), "expected an empty message"),
        (
            .init(testCase: "large_unary", transport: .plaintext, fault: "short-payload"),
            "expected 314159 bytes, saw 314158"
        ),
        (.init(testCase: "large_unary", transport: .tls, fault: "nonzero-payload"), "expected zero bytes"),
        (
            .init(testCase: "client_compressed_unary", transport: .plaintext, fault: "ignore-expect-compressed"),
            "expected status INVALID_ARGUMENT, saw OK"
        ),
        (
            .init(testCase: "server_compressed_unary", transport: .plaintext, fault: "uncompressed-response"),
            "compressed flag with response_compressed=true: expected true, saw false"
        ),
        (
            .init(testCase: "server_compressed_unary", transport: .tls, fault: "compressed-response"),
            "compressed flag with response_compressed=false: expected false, saw true"
        ),
        (.init(testCase: "custom_metadata", transport: .plaintext, fault: "no-echo"), "saw none"),
        (.init(testCase: "custom_metadata", transport: .tls, fault: "altered-echo"), "test_initial_metadata_valuX"),
        (
            .init(testCase: "status_code_and_message", transport: .plaintext, fault: "status-code-internal"),
            "expected status UNKNOWN, saw INTERNAL"
        ),
        (
            .init(testCase: "special_status_message", transport: .tls, fault: "status-message-stripped"),
            #"saw "test with whitespace\r\nand Unicode BMP ☺ and non-BMP 😈""#
        ),
        (
            .init(testCase: "unimplemented_method", transport: .plaintext, fault: "implemented-unimplemented"),
            "expected status UNIMPLEMENTED, saw OK"
        ),
        (
            .init(testCase: "unimplemented_service", transport: .plaintext, fault: "implemented-unimplemented"),
            "expected status UNIMPLEMENTED, saw OK"
        ),
        (
            .init(testCase: "pick_first_unary", transport: .plaintext, fault: "server-id-per-call"),
            "server_id of call 2"
        ),
        (
            .init(testCase: "compute_engine_creds", transport: .tls, credentials: .metadata, fault: "username-other"),
            #"SimpleResponse.username: expected "sandbox-compute@"#
        ),
        (
            .init(testCase: "service_account_creds", transport: .tls, credentials: .keyWithScope, fault: "scope-other"),
            "SimpleResponse.oauth_scope: expected a scope within"
        ),
        (
            .init(testCase: "jwt_token_creds", transport: .tls, credentials: .key, fault: "username-other"),
            #"saw "someone-else@example.com""#
        ),
        (
            .init(testCase: "per_rpc_creds", transport: .tls, credentials: .key, fault: "username-other"),
            #"saw "someone-else@example.com""#
        ),
        (
            .init(
                testCase: "google_default_credentials",
                transport: .tls,
                credentials: .adcKey,
                fault: "username-other"
            ),
            #"saw "someone-else@example.com""#
        ),
    ]

    @Test("Each case fails when the server breaks its rule", arguments: failing)
    func fails(_ scenario: InteropScenario, expectedWords: String) async throws {
        let server = try await InteropServer.shared.value
        let (arguments, environment) = scenario.invocation(server)
        let result = try await InteropServer.run(arguments, environment: environment)
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("interop_client: \(scenario.testCase) FAILED: "), "\(result.stderr)")
        #expect(result.stderr.contains(expectedWords), "\(result.stderr)")
        #expect(!result.stdout.contains("passed"))
    }

    @Test("The auth cases check the account they were told to expect")
    func wrongDefaultServiceAccount() async throws {
        let server = try await InteropServer.shared.value
        var scenario = InteropScenario(testCase: "compute_engine_channel_credentials", transport: .tls)
        scenario.extra = ["--default_service_account=another@sandbox-project.iam.gserviceaccount.com"]
        let (arguments, plainEnvironment) = scenario.invocation(server)
        var environment = plainEnvironment
        environment["GCE_METADATA_HOST"] = server.metadataHost
        let result = try await InteropServer.run(arguments, environment: environment)
        #expect(result.status == 1)
        #expect(
            result.stderr.contains(
                #"SimpleResponse.username: expected "another@sandbox-project.iam.gserviceaccount.com", saw "\#(server.metadataEmail)""#
            ),
            "\(result.stderr)"
        )
    }
}
