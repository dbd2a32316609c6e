import Foundation
import OAuth2
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("authorize(URLRequest) against the sandbox issuer")
struct AuthorizeURLRequestTests {
    @Test(
        "a stored access token a header cannot carry is never set: the session refreshes instead, and userinfo accepts the new one",
        arguments: ["bad\r\nX-Injected: yes", "has space", "caf\u{E9}", String(repeating: "A", count: 20_000)]
    )
    func invalidStoredTokenIsNotSent(badToken: String) async throws {
        let issuer = try await SandboxIssuer.shared()
        let client = try await issuer.makeClient()
        var state = try await issuer.signIn(client)
        state.accessToken = badToken
        let session = AuthSession(state: state)
        var request = URLRequest(url: try #require(issuer.configuration.userinfoEndpoint))
        try await session.authorize(&request)

        let header = try #require(request.value(forHTTPHeaderField: "Authorization"))
        #expect(!header.contains(badToken))
        let refreshed = try #require(await session.state.accessToken)
        #expect(header == "Bearer \(refreshed)")
        let (body, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: body, as: UTF8.self).contains(issuer.sandbox.user))
    }

    @Test("without a refresh token, such a token is an error that does not quote it, and no header is set")
    func invalidStoredTokenWithoutRefreshToken() async throws {
        let issuer = try await SandboxIssuer.shared()
        let client = try await issuer.makeClient()
        var state = try await issuer.signIn(client)
        state.accessToken = "bad\r\nX-Injected: yes"
        state.refreshToken = nil
        let session = AuthSession(state: state)
        var request = URLRequest(url: try #require(issuer.configuration.userinfoEndpoint))
        let error = await #expect(throws: OAuthError.self) { try await session.authorize(&request) }
        #expect(error?.requiresReauthorization == true)
        #expect(error?.message.contains("X-Injected") == false)
        #expect(request.value(forHTTPHeaderField: "Authorization") == nil)
        #expect(session.cachedToken() == nil)
    }
}
