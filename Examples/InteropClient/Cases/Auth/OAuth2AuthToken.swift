import AuthRPC
import AuthSampleService
import GoogleAuth
import OAuth2

/// oauth2_auth_token: a token is fetched first with the auth library (the key's JWT bearer grant,
/// or the metadata server when no key is given), then sent as a fixed access token; the server
/// sees the key's `client_email` (or `--default_service_account`) with a scope within
/// `--oauth_scope`.
struct OAuth2AuthToken: InteropCase {
    func channelCredentials(_ sources: CredentialSources) async throws -> CallCredentials? {
        let scopes = try sources.requiredScopes()
        let fetched: FetchedAccessToken
        do {
            if sources.hasServiceAccountKey {
                fetched = try await sources.serviceAccount(try sources.serviceAccountKey(), scopes: scopes).fetchToken()
            } else {
                fetched = try await sources.computeEngine(scopes: scopes).fetchToken()
            }
        } catch let error as OAuthError {
            throw SetupFailure("cannot fetch the access token: \(error.message)")
        }
        return .accessToken(fetched.accessToken)
    }

    func run(_ context: CaseContext) async throws {
        let sources = context.sources
        let expected =
            sources.hasServiceAccountKey
            ? try sources.serviceAccountKey().clientEmail : try sources.defaultServiceAccount()
        let scopes = try sources.requiredScopes()
        let response = try await expectSuccess("UnaryCall") { () async throws(RPCError) in
            try await context.testService.unaryCall(IdentityChecks.request(fillScope: true), options: context.options)
        }
        try Payloads.check(response.message)
        try IdentityChecks.username(response.message, is: expected)
        try IdentityChecks.scope(response.message, within: scopes)
    }
}
