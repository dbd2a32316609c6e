import AuthRPC
import AuthSampleService
import GoogleAuth

/// compute_engine_channel_credentials: metadata-server credentials for the whole channel (with
/// `--oauth_scope`'s scopes, else the instance's), over TLS (no ALTS here); the server sees
/// `--default_service_account`.
struct ComputeEngineChannelCredentials: InteropCase {
    var forcesTLS: Bool { true }

    func channelCredentials(_ sources: CredentialSources) async throws -> CallCredentials? {
        .provider(try sources.provider(try sources.computeEngine(scopes: sources.flags.scopes)))
    }

    func run(_ context: CaseContext) async throws {
        let account = try context.sources.defaultServiceAccount()
        let response = try await expectSuccess("UnaryCall") { () async throws(RPCError) in
            try await context.testService.unaryCall(IdentityChecks.request(fillScope: false), options: context.options)
        }
        try Payloads.check(response.message)
        try IdentityChecks.username(response.message, is: account)
    }
}
