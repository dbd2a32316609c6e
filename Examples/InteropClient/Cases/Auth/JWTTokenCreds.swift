import AuthRPC
import AuthSampleService
import GoogleAuth

/// jwt_token_creds: the channel's calls carry self-signed JWTs of the key (no token endpoint);
/// the server sees the key's `client_email`.
struct JWTTokenCreds: InteropCase {
    func channelCredentials(_ sources: CredentialSources) async throws -> CallCredentials? {
        .provider(try sources.selfSignedJWTs(try sources.serviceAccountKey()))
    }

    func run(_ context: CaseContext) async throws {
        let key = try context.sources.serviceAccountKey()
        let response = try await expectSuccess("UnaryCall") { () async throws(RPCError) in
            try await context.testService.unaryCall(IdentityChecks.request(fillScope: false), options: context.options)
        }
        try Payloads.check(response.message)
        try IdentityChecks.username(response.message, is: key.clientEmail)
    }
}
