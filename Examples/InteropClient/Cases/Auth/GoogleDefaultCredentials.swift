import AuthRPC
import AuthSampleService
import GoogleAuth

/// google_default_credentials: Application Default Credentials for the whole channel, which is
/// TLS (gRPC's default credentials would pick ALTS on Google's network; this library has no
/// ALTS); the server sees `--default_service_account`.
struct GoogleDefaultCredentials: InteropCase {
    var forcesTLS: Bool { true }

    func channelCredentials(_ sources: CredentialSources) async throws -> CallCredentials? {
        .provider(try sources.applicationDefault())
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
