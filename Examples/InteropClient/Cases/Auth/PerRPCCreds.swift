import AuthRPC
import AuthSampleService
import GoogleAuth

/// per_rpc_creds: the channel has TLS only; the call itself carries the key's credentials (its
/// JWT bearer grant for `--oauth_scope`, or self-signed JWTs without one); the server sees the
/// key's `client_email` (and a scope within `--oauth_scope` when one was asked for).
struct PerRPCCreds: InteropCase {
    func run(_ context: CaseContext) async throws {
        let sources = context.sources
        let key = try sources.serviceAccountKey()
        let scopes = context.flags.scopes
        var options = context.options
        if scopes.isEmpty {
            options.authTokenProvider = try sources.selfSignedJWTs(key)
        } else {
            options.authTokenProvider = try sources.provider(try sources.serviceAccount(key, scopes: scopes))
        }
        let sent = options
        let response = try await expectSuccess("UnaryCall with per-call credentials") { () async throws(RPCError) in
            try await context.testService.unaryCall(IdentityChecks.request(fillScope: !scopes.isEmpty), options: sent)
        }
        try Payloads.check(response.message)
        try IdentityChecks.username(response.message, is: key.clientEmail)
        if !scopes.isEmpty { try IdentityChecks.scope(response.message, within: scopes) }
    }
}
