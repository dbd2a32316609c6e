import AuthRPC
import AuthSampleService
import GoogleAuth

/// compute_engine_creds: the channel's calls carry metadata-server tokens for `--oauth_scope`;
/// the server sees `--default_service_account` with a scope within `--oauth_scope`.
struct ComputeEngineCreds: InteropCase {
    func channelCredentials(_ sources: CredentialSources) async throws -> CallCredentials? {
        .provider(try sources.provider(try sources.computeEngine(scopes: try sources.requiredScopes())))
    }

    func run(_ context: CaseContext) async throws {
        let sources = context.sources
        let account = try sources.defaultServiceAccount()
        let scopes = try sources.requiredScopes()
        let response = try await expectSuccess("UnaryCall") { () async throws(RPCError) in
            try await context.testService.unaryCall(IdentityChecks.request(fillScope: true), options: context.options)
        }
        try Payloads.check(response.message)
        try IdentityChecks.username(response.message, is: account)
        try IdentityChecks.scope(response.message, within: scopes)
    }
}
