import Foundation
import OAuth2
import TestSupport
import Testing

/// Token responses from the hostile peer: what a broken or hostile token endpoint can send, and
/// what the session must make of it (refuse it with a clear error, or clamp it).
@Suite("Token responses from a hostile token endpoint")
struct TokenResponseValidationTests {
    static let client = OAuthClient(id: "hostile-test-client", secret: "hostile-test-secret")
    /// Every token value in these tests contains this, so no message may.
    static let marker = "SECRETVALUE"

    /// Asks the hostile peer's `body` for a client-credentials token.
    func exchange(_ body: String) async throws -> Result<AuthState, OAuthError> {
        let peer = try await HostilePeer.shared()
        let configuration = HostilePeer.configuration(tokenEndpoint: try await peer.json(body))
        do throws(OAuthError) {
            return .success(
                try await ClientCredentialsFlow.authorize(configuration: configuration, client: Self.client, scopes: [])
            )
        } catch {
            return .failure(error)
        }
    }

    static let refused: [(String, String, String)] = [
        (
            "expires_in NaN, sent as a string",
            #"{"access_token":"at-SECRETVALUE","token_type":"Bearer","expires_in":"NaN"}"#, "expires_in"
        ),
        (
            "expires_in Infinity, sent as a string",
            #"{"access_token":"at-SECRETVALUE","token_type":"Bearer","expires_in":"Infinity"}"#, "expires_in"
        ),
        (
            "expires_in inf, sent as a string",
            #"{"access_token":"at-SECRETVALUE","token_type":"Bearer","expires_in":"inf"}"#, "expires_in"
        ),
        ("expires_in 0", #"{"access_token":"at-SECRETVALUE","token_type":"Bearer","expires_in":0}"#, "expires_in"),
        (
            "expires_in negative", #"{"access_token":"at-SECRETVALUE","token_type":"Bearer","expires_in":-30}"#,
            "expires_in"
        ),
        (
            "expires_in a boolean", #"{"access_token":"at-SECRETVALUE","token_type":"Bearer","expires_in":true}"#,
            "expires_in"
        ),
        (
            "expires_in an object", #"{"access_token":"at-SECRETVALUE","token_type":"Bearer","expires_in":{}}"#,
            "expires_in"
        ),
        ("token_type mac", #"{"access_token":"at-SECRETVALUE","token_type":"mac","expires_in":3600}"#, "token_type"),
        ("token_type DPoP", #"{"access_token":"at-SECRETVALUE","token_type":"DPoP","expires_in":3600}"#, "token_type"),
        (
            "token_type not a string", #"{"access_token":"at-SECRETVALUE","token_type":1,"expires_in":3600}"#,
            "token_type"
        ),
        (
            "access token with CR LF", #"{"access_token":"at-SECRETVALUE\r\nX-Injected: 1","token_type":"Bearer"}"#,
            "access_token"
        ),
        (
            "access token with a non-ASCII letter", #"{"access_token":"at-SECRETVALUE-\u00e9","token_type":"Bearer"}"#,
            "access_token"
        ),
        ("access token with a space", #"{"access_token":"at SECRETVALUE","token_type":"Bearer"}"#, "access_token"),
        ("access token with a NUL", #"{"access_token":"at-SECRETVALUE\u0000","token_type":"Bearer"}"#, "access_token"),
        (
            "access token of 20,000 characters",
            #"{"access_token":"SECRETVALUE\#(String(repeating: "a", count: 20_000))","token_type":"Bearer"}"#,
            "access_token"
        ),
        ("access token not a string", #"{"access_token":12345,"token_type":"Bearer"}"#, "access_token"),
        (
            "refresh token with a line feed",
            #"{"access_token":"at-ok","refresh_token":"rt-SECRETVALUE\n","token_type":"Bearer"}"#, "refresh_token"
        ),
        (
            "refresh token of 20,000 characters",
            #"{"access_token":"at-ok","refresh_token":"SECRETVALUE\#(String(repeating: "r", count: 20_000))","token_type":"Bearer"}"#,
            "refresh_token"
        ),
        (
            "ID token that is not a JWT",
            #"{"access_token":"at-ok","id_token":"not a JWT SECRETVALUE","token_type":"Bearer"}"#, "id_token"
        ),
        (
            "scope with a double quote", #"{"access_token":"at-SECRETVALUE","scope":"a \"b","token_type":"Bearer"}"#,
            "scope"
        ),
        (
            "scope with a non-ASCII letter",
            #"{"access_token":"at-SECRETVALUE","scope":"caf\u00e9","token_type":"Bearer"}"#, "scope"
        ),
    ]

    @Test(
        "an unusable token response is refused with a transient error naming the field, never quoting a token",
        arguments: refused
    )
    func refusedResponses(label: String, body: String, field: String) async throws {
        let result = try await exchange(body)
        guard case .failure(let error) = result else {
            Issue.record("\(label): accepted")
            return
        }
        #expect(error.kind == .transient, "\(label)")
        #expect(error.message.contains(field), "\(label): \(error.message.prefix(200))")
        #expect(error.message.contains("token endpoint"), "\(label): \(error.message.prefix(200))")
        for text in [error.message, error.description, String(describing: error), String(reflecting: error)] {
            #expect(!text.contains(Self.marker), "\(label): a token value leaked: \(text.prefix(200))")
        }
    }

    @Test(
        "an expires_in beyond a year (1e300, 10^30) is clamped to a year, and the session stays readable",
        arguments: ["1e300", "1000000000000000000000000000000", "\"1e300\""]
    )
    func hugeLifetimesAreClamped(expiresIn: String) async throws {
        let before = Date()
        let state = try await exchange(#"{"access_token":"at-ok","token_type":"Bearer","expires_in":\#(expiresIn)}"#)
            .get()
        let expiresAt = try #require(state.accessTokenExpiresAt)
        #expect(expiresAt.timeIntervalSince(before) <= 365 * 86_400 + 60)
        #expect(expiresAt.timeIntervalSince(before) >= 364 * 86_400)
        let reread = try AuthState(decoding: try state.encoded())
        #expect(reread.accessToken == "at-ok")
    }

    @Test(
        "token_type Bearer in any case, or absent, is accepted; numbers sent as strings and fractions are read",
        arguments: [
            (#"{"access_token":"at-1","token_type":"bEaReR","expires_in":3600}"#, 3600.0),
            (#"{"access_token":"at-2","expires_in":"120"}"#, 120.0),
            (#"{"access_token":"at-3","token_type":"Bearer","expires_in":3599.5}"#, 3599.5),
        ]
    )
    func acceptedResponses(body: String, lifetime: Double) async throws {
        let state = try await exchange(body).get()
        let issuedAt = try #require(state.accessTokenIssuedAt)
        let expiresAt = try #require(state.accessTokenExpiresAt)
        #expect(abs(expiresAt.timeIntervalSince(issuedAt) - lifetime) < 0.001)
        #expect(state.accessToken?.hasPrefix("at-") == true)
    }

    @Test("a JWT-shaped ID token, a b64token access token and an RFC 6749 scope are taken in")
    func wellFormedResponse() async throws {
        let state = try await exchange(
            #"{"access_token":"ya29.a0-_~+/AbC==","token_type":"Bearer","expires_in":3600,"refresh_token":"1//0g-rt","id_token":"eyJhbGciOiJub25lIn0.eyJzdWIiOiI0MiJ9.","scope":"openid https://www.googleapis.com/auth/xapi.zoo"}"#
        ).get()
        #expect(state.accessToken == "ya29.a0-_~+/AbC==")
        #expect(state.refreshToken == "1//0g-rt")
        #expect(state.userID == "42")
        #expect(state.grantedScopes == ["openid", "https://www.googleapis.com/auth/xapi.zoo"])
    }

    @Test("a refresh answer that rotates the refresh token but is otherwise unusable keeps the rotated refresh token")
    func rotatedRefreshTokenIsKeptFromAnUnusableAnswer() async throws {
        let peer = try await HostilePeer.shared()
        let script = try await peer.json(
            #"{"access_token":"at SECRETVALUE with spaces","token_type":"Bearer","expires_in":3600,"refresh_token":"rt-rotated-SECRETVALUE"}"#
        )
        var state = AuthState(
            configuration: HostilePeer.configuration(tokenEndpoint: script),
            client: Self.client,
            scopes: ["s"],
            grant: GrantRecord(type: .deviceCode),
            accessToken: "at-old",
            refreshToken: "rt-old"
        )
        state = expired(state)
        let store = InMemoryAuthSessionStore(state)
        let session = AuthSession(state: state, store: store)

        let error = await #expect(throws: OAuthError.self) { try await session.freshAccessToken() }
        #expect(error?.kind == .transient)
        #expect(error?.message.contains("access_token") == true)
        #expect(error?.message.contains(Self.marker) == false)
        // The issuer spent rt-old when it rotated; the session keeps the new one, saved, and no
        // access token from the unusable answer.
        let after = await session.state
        #expect(after.refreshToken == "rt-rotated-SECRETVALUE")
        #expect(after.accessToken != "at SECRETVALUE with spaces")
        #expect(!after.isAccessTokenFresh())
        #expect(after.authorizationError == nil)
        #expect(try store.retrieve()?.refreshToken == "rt-rotated-SECRETVALUE")
        #expect(try await peer.stats(script).formKeys.first?.contains("refresh_token") == true)
    }
}
