import AuthRPC
import AuthSampleService

/// What a case runs with: the flags, the channel made for it, and the options its calls start
/// from (the channel's credentials among them).
struct CaseContext: Sendable {
    let flags: InteropFlags
    let sources: CredentialSources
    let channels: ChannelFactory
    let channel: Channel

    /// The TestService client on ``channel``.
    var testService: Grpc_Testing_TestServiceClient { Grpc_Testing_TestServiceClient(channel: channel) }

    /// The options every call of the case starts from.
    var options: CallOptions { channels.baseOptions }
}

/// One interop case: its calls and what it asserts on the answers.
protocol InteropCase: Sendable {
    /// Whether the case's credentials choose TLS themselves, whatever `--use_tls` says (gRPC's
    /// channel credentials bundles).
    var forcesTLS: Bool { get }

    /// The credentials every call on the channel carries; `nil` for none. Made before the
    /// channel, so a token fetched out of band is fetched here.
    func channelCredentials(_ sources: CredentialSources) async throws -> CallCredentials?

    /// Runs the calls; throws ``CaseFailure`` when an answer is not what the description asserts,
    /// ``SetupFailure`` when the case cannot start.
    func run(_ context: CaseContext) async throws
}

extension InteropCase {
    var forcesTLS: Bool { false }

    func channelCredentials(_ sources: CredentialSources) async throws -> CallCredentials? { nil }
}
