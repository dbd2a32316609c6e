import AuthRPC
import Testing

@Suite("CallCredentials")
struct CallCredentialsTests {
    struct FixedProvider: AuthTokenProvider {
        func token() async throws -> String { "provided-token" }
    }

    @Test("an access token reads back as itself and no provider; a provider as itself and no token")
    func payloads() async throws {
        let token = CallCredentials.accessToken("secret-token")
        #expect(token.accessToken == "secret-token")
        #expect(token.provider == nil)

        let provider = CallCredentials.provider(FixedProvider())
        #expect(provider.accessToken == nil)
        #expect(try await provider.provider?.token() == "provided-token")
    }

    @Test("the description names the kind and never the token")
    func description() {
        #expect(CallCredentials.accessToken("secret-token").description == "accessToken(<redacted>)")
        #expect(CallCredentials.provider(FixedProvider()).description == "provider(FixedProvider)")
    }

    @Test("CallOptions' token and provider are views of the one credentials value")
    func callOptionsViews() {
        var options = CallOptions(credentials: .accessToken("secret-token"))
        #expect(options.oauth2AccessToken == "secret-token")
        #expect(options.authTokenProvider == nil)
        options.authTokenProvider = FixedProvider()
        #expect(options.oauth2AccessToken == nil)
        #expect(options.credentials?.provider is FixedProvider)
        options.oauth2AccessToken = "other"
        #expect(options.authTokenProvider == nil)
        #expect(options.credentials?.accessToken == "other")
        options.oauth2AccessToken = nil
        #expect(options.credentials == nil)
    }
}
