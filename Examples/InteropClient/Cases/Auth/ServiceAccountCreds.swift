import AuthRPC
import AuthSampleService
import GoogleAuth

/// service_account_creds: the channel's calls carry tokens of the key's JWT bearer grant for
/// `--oauth_scope`; the server sees the key's `client_email` with a scope within `--oauth_scope`.
struct ServiceAccountCreds: InteropCase {
    func channelCredentials(_ sources: CredentialSources) async throws -> CallCredentials? {
        let source = try sources.serviceAccount(try sources.serviceAccountKey(), scopes: try sources.requiredScopes())
        return .provider(try sources.provider(source))
    }

    func run(_ context: CaseContext) async throws {
        let key = try context.sources.serviceAccountKey()
        let scopes = try context.sources.requiredScopes()
        let response = try await expectSuccess("UnaryCall") { () async throws(RPCError) in
            try await context.testService.unaryCall(IdentityChecks.request(fillScope: true), options: context.options)
        }
        try Payloads.check(response.message)
        try IdentityChecks.username(response.message, is: key.clientEmail)
        try IdentityChecks.scope(response.message, within: scopes)
    }
}
