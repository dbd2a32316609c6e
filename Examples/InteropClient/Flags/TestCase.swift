/// The cases this client runs: the unary and auth cases of gRPC's interop test descriptions,
/// and Go's `pick_first_unary`, `rpc_soak` and `channel_soak`. The streaming cases are left out:
/// the library makes unary calls only.
enum TestCase: String, CaseIterable, Sendable {
    case emptyUnary = "empty_unary"
    case largeUnary = "large_unary"
    case clientCompressedUnary = "client_compressed_unary"
    case serverCompressedUnary = "server_compressed_unary"
    case customMetadata = "custom_metadata"
    case statusCodeAndMessage = "status_code_and_message"
    case specialStatusMessage = "special_status_message"
    case unimplementedMethod = "unimplemented_method"
    case unimplementedService = "unimplemented_service"
    case pickFirstUnary = "pick_first_unary"
    case rpcSoak = "rpc_soak"
    case channelSoak = "channel_soak"
    case computeEngineCreds = "compute_engine_creds"
    case serviceAccountCreds = "service_account_creds"
    case jwtTokenCreds = "jwt_token_creds"
    case oauth2AuthToken = "oauth2_auth_token"
    case perRPCCreds = "per_rpc_creds"
    case googleDefaultCredentials = "google_default_credentials"
    case computeEngineChannelCredentials = "compute_engine_channel_credentials"

    /// The streaming cases of the descriptions, which this client does not run (nor
    /// cacheable_unary, which needs GET requests and a caching proxy).
    static let streaming = [
        "client_streaming", "client_compressed_streaming", "server_streaming",
        "server_compressed_streaming", "ping_pong", "empty_stream", "cancel_after_begin",
        "cancel_after_first_response", "timeout_on_sleeping_server",
    ]

    /// What the case checks, for `--help`.
    var summary: String {
        switch self {
        case .emptyUnary: "EmptyCall with an empty message; the answer is empty"
        case .largeUnary: "UnaryCall with 271828 zero bytes; 314159 zero bytes come back"
        case .clientCompressedUnary:
            "an uncompressed request that expects compression fails INVALID_ARGUMENT; a gzip one passes"
        case .serverCompressedUnary: "the response's compressed flag follows response_compressed"
        case .customMetadata: "x-grpc-test-echo-initial and x-grpc-test-echo-trailing-bin come back"
        case .statusCodeAndMessage: "the status code and message asked for come back"
        case .specialStatusMessage: "a status message with whitespace, BMP and non-BMP characters comes back exact"
        case .unimplementedMethod: "TestService/UnimplementedCall fails UNIMPLEMENTED"
        case .unimplementedService: "UnimplementedService/UnimplementedCall fails UNIMPLEMENTED"
        case .pickFirstUnary: "100 calls all reach the same server_id"
        case .rpcSoak: "--soak_iterations large unary calls on one channel"
        case .channelSoak: "--soak_iterations large unary calls, each on a new channel"
        case .computeEngineCreds:
            "metadata-server token on the channel; username is --default_service_account, scope in --oauth_scope"
        case .serviceAccountCreds:
            "JWT bearer grant with the key's account; username is its client_email, scope in --oauth_scope"
        case .jwtTokenCreds: "self-signed JWT of the key on the channel; username is its client_email"
        case .oauth2AuthToken: "a token fetched first, then sent as a fixed token; username and scope checked"
        case .perRPCCreds: "the key's credentials on the call, not the channel; username is its client_email"
        case .googleDefaultCredentials:
            "Application Default Credentials; username is --default_service_account (TLS, never ALTS)"
        case .computeEngineChannelCredentials:
            "metadata-server credentials for the whole channel; username is --default_service_account"
        }
    }

    /// Whether the case sends credentials, and so needs TLS.
    var isAuthCase: Bool {
        switch self {
        case .computeEngineCreds, .serviceAccountCreds, .jwtTokenCreds, .oauth2AuthToken, .perRPCCreds,
            .googleDefaultCredentials, .computeEngineChannelCredentials:
            true
        default: false
        }
    }

    /// The `--help` list: every case with what it checks.
    static var helpList: String {
        allCases.map { "  \($0.rawValue): \($0.summary)" }.joined(separator: "\n")
    }
}
