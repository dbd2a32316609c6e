import ArgumentParser

/// The flags of gRPC's interop clients (doc/interop-test-descriptions.md), with Go's additions:
/// `--ca_file`, `--additional_metadata`, `--service_config_json`, `--custom_credentials_type`
/// and the soak flags. Names and defaults are Go's.
struct InteropFlags: ParsableArguments, Sendable {
    @Option(name: .customLong("server_host"), help: "The server's host name or address.")
    var serverHost = "localhost"

    @Option(
        name: .customLong("server_host_override"),
        help: "The name TLS verifies and :authority carries, when it is not --server_host."
    )
    var serverHostOverride: String?

    @Option(name: .customLong("server_port"), help: "The server's port.")
    var serverPort = 10000

    @Option(name: .customLong("test_case"), help: "The case to run (listed above).")
    var testCase = TestCase.largeUnary.rawValue

    @Option(
        name: .customLong("use_tls"),
        help: "TLS (true) or plaintext HTTP/2 (false, the default).",
        transform: GRPCBoolean.parse
    )
    var useTLS = false

    @Option(
        name: .customLong("use_test_ca"),
        help: "Trust only the CA in --ca_file instead of the system's roots (default false).",
        transform: GRPCBoolean.parse
    )
    var useTestCA = false

    @Option(
        name: .customLong("ca_file"),
        help: "The test CA's certificate (PEM), for --use_test_ca=true (this project ships no copy of gRPC's)."
    )
    var caFile: String?

    @Option(
        name: .customLong("default_service_account"),
        help: "The email of the Compute Engine default service account."
    )
    var defaultServiceAccount: String?

    @Option(name: .customLong("oauth_scope"), help: "The OAuth scope to ask for (several: separated by commas).")
    var oauthScope: String?

    @Option(
        name: .customLong("service_account_key_file"),
        help: "A service account's JSON key file (else GOOGLE_APPLICATION_CREDENTIALS, for the cases that allow it)."
    )
    var serviceAccountKeyFile: String?

    @Option(
        name: .customLong("custom_credentials_type"),
        help:
            "google_default_credentials or compute_engine_channel_creds: channel credentials that choose TLS themselves."
    )
    var customCredentialsType: String?

    @Option(name: .customLong("additional_metadata"), help: "key:value pairs separated by ';', sent with every call.")
    var additionalMetadata: String?

    @Option(name: .customLong("service_config_json"), help: "The channel's service config (gRPC's JSON).")
    var serviceConfigJSON: String?

    @Option(name: .customLong("soak_iterations"), help: "Calls a soak case makes.")
    var soakIterations = 10

    @Option(name: .customLong("soak_max_failures"), help: "Iterations a soak case may fail (status or latency).")
    var soakMaxFailures = 0

    @Option(
        name: .customLong("soak_per_iteration_max_acceptable_latency_ms"),
        help: "An iteration slower than this counts as failed."
    )
    var soakPerIterationMaxAcceptableLatencyMs = 1000

    @Option(
        name: .customLong("soak_overall_timeout_seconds"),
        help: "A soak case stops, and fails, when its iterations have not all run by then."
    )
    var soakOverallTimeoutSeconds = 10

    @Option(
        name: .customLong("soak_min_time_ms_between_rpcs"),
        help: "The least time from one iteration's start to the next's."
    )
    var soakMinTimeMsBetweenRPCs = 0

    @Option(name: .customLong("soak_request_size"), help: "The payload each soak call sends.")
    var soakRequestSize = 271_828

    @Option(name: .customLong("soak_response_size"), help: "The payload each soak call asks for.")
    var soakResponseSize = 314_159

    @Option(name: .customLong("soak_num_threads"), help: "Soak workers running at once; they share the iterations.")
    var soakNumThreads = 1

    /// The case `--test_case` names.
    var selectedCase: TestCase {
        get throws {
            guard let found = TestCase(rawValue: testCase) else {
                let streaming = TestCase.streaming.contains(testCase) ? " (a streaming case: out of scope)" : ""
                throw ValidationError(
                    "unknown test case '\(testCase)'\(streaming); supported: "
                        + TestCase.allCases.map(\.rawValue).joined(separator: ", ")
                )
            }
            return found
        }
    }

    /// The scopes of `--oauth_scope`, split at commas and spaces.
    var scopes: [String] {
        (oauthScope ?? "").split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
    }

    mutating func validate() throws {
        let selected = try selectedCase
        guard (1...65535).contains(serverPort) else { throw ValidationError("--server_port must be 1...65535") }
        if useTestCA && caFile == nil {
            throw ValidationError("--use_test_ca=true needs --ca_file: this client ships no copy of gRPC's test CA")
        }
        if caFile != nil && !useTestCA { throw ValidationError("--ca_file is read only with --use_test_ca=true") }
        if let additionalMetadata { _ = try AdditionalMetadata(parsing: additionalMetadata) }
        if soakIterations < 1 || soakNumThreads < 1 || soakIterations % soakNumThreads != 0 {
            throw ValidationError("--soak_iterations must be a positive multiple of --soak_num_threads")
        }
        if soakMaxFailures < 0 || soakPerIterationMaxAcceptableLatencyMs < 0 || soakOverallTimeoutSeconds < 1
            || soakMinTimeMsBetweenRPCs < 0 || soakRequestSize < 0 || soakResponseSize < 0
        {
            throw ValidationError("the soak flags must not be negative (and the overall timeout at least 1 s)")
        }
        if let type = customCredentialsType {
            let expected: [String: TestCase] = [
                "google_default_credentials": .googleDefaultCredentials,
                "compute_engine_channel_creds": .computeEngineChannelCredentials,
            ]
            guard expected[type] == selected else {
                throw ValidationError(
                    "--custom_credentials_type=\(type) does not go with --test_case=\(testCase) "
                        + "(google_default_credentials and compute_engine_channel_creds go with their own cases)"
                )
            }
        }
        let channelChoosesTLS = selected == .googleDefaultCredentials || selected == .computeEngineChannelCredentials
        if selected.isAuthCase && !useTLS && !channelChoosesTLS {
            throw ValidationError("\(testCase) sends credentials: it needs --use_tls=true")
        }
    }
}
