import AuthRPC
import Foundation
import OAuth2
import TestSupport
import Testing

/// Every grant reads its token endpoint's answer the same way: AuthSession's refresh and the
/// flows (TokenEndpoint) and the Google credentials' grants (GrantRequest), against the same
/// answers of the hostile peer.
@Suite("One classification of token endpoint answers, for sessions and Google grants alike")
struct TokenAnswerTests {
    static let client = OAuthClient(
        id: "answer-test-client",
        secret: "client-secret-\(UInt64.random(in: 1...UInt64.max))"
    )

    /// The kind each answer is, whoever asked.
    static let answers: [(label: String, status: Int, body: String, kind: String)] = [
        ("a usable token", 200, #"{"access_token":"at-ok","token_type":"Bearer","expires_in":3600}"#, "token"),
        ("an unusable token", 200, #"{"access_token":"at with a space","token_type":"Bearer"}"#, "transient"),
        (
            "an OAuth error sent with 200", 200, #"{"error":"invalid_grant","error_description":"no"}"#,
            "authorization:invalid_grant"
        ),
        ("invalid_grant", 400, #"{"error":"invalid_grant"}"#, "authorization:invalid_grant"),
        ("invalid_client", 401, #"{"error":"invalid_client"}"#, "authorization:invalid_client"),
        ("temporarily_unavailable", 400, #"{"error":"temporarily_unavailable"}"#, "transient"),
        ("a 400 without an OAuth error", 400, "<html>bad request</html>", "transient"),
        ("429", 429, #"{"error":"slow_down"}"#, "transient"),
        ("503", 503, #"{"error":"invalid_grant"}"#, "transient"),
    ]

    @Test(
        "the same answer is the same kind of outcome for a session's refresh and for a Google grant",
        arguments: answers
    )
    func sameClassification(label: String, status: Int, body: String, kind: String) async throws {
        let peer = try await HostilePeer.shared()
        let script = try await peer.json(body, status: status)

        let session = AuthSession(state: expired(refreshable(at: script)), refreshBackoff: .none)
        let bySession = await outcome { () async throws(OAuthError) in try await session.freshAccessToken() }
        let byGrant = await outcome { () async throws(OAuthError) in
            try await GrantRequest.requestToken(
                at: script.url.appendingPathComponent("token"),
                parameters: [("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"), ("assertion", "a.b.c")],
                client: nil,
                secrets: [],
                transport: URLSessionOAuthTransport()
            ).accessToken
        }
        #expect(bySession == kind, "\(label): the session's refresh")
        #expect(byGrant == kind, "\(label): the Google grant")
    }

    @Test("a refused refresh never quotes the refresh token or the client secret, even cut in the middle")
    func refusalsDoNotQuoteTheRequestsSecrets() async throws {
        let peer = try await HostilePeer.shared()
        let refreshToken = "rt-\(UInt64.random(in: 1...UInt64.max))-echoed-back-by-the-server"
        // One echo whole, one cut by the 200-character limit after its first 8 characters.
        let description = "your refresh token \(refreshToken) and client secret \(Self.client.secret!) are wrong"
        let cut = String(repeating: "x", count: 192) + refreshToken
        for text in [description, cut] {
            let body = try JSONSerialization.data(withJSONObject: ["error": "invalid_grant", "error_description": text])
            let script = try await peer.json(String(decoding: body, as: UTF8.self), status: 400)
            var state = refreshable(at: script)
            state.refreshToken = refreshToken
            let session = AuthSession(state: expired(state))
            let error = await #expect(throws: OAuthError.self) { try await session.freshAccessToken() }
            #expect(error?.oauthErrorCode == "invalid_grant")
            for shown in [error?.message ?? "", error?.description ?? ""] {
                #expect(!shown.contains(refreshToken.prefix(8)), "the refresh token leaked: \(shown)")
                #expect(!shown.contains(Self.client.secret!), "the client secret leaked: \(shown)")
            }
            #expect(error?.message.contains("<redacted>") == true || text == cut, "\(error?.message ?? "")")
        }
    }

    /// A session state whose token endpoint is `script`, holding a refresh token.
    private func refreshable(at script: HostilePeer.Script) -> AuthState {
        AuthState(
            configuration: HostilePeer.configuration(tokenEndpoint: script),
            client: Self.client,
            scopes: ["s"],
            grant: GrantRecord(type: .deviceCode),
            accessToken: "at-old",
            refreshToken: "rt-old"
        )
    }

    /// `token`, `transient`, `authorization:<code>` or the other kind's name.
    private func outcome(_ body: () async throws(OAuthError) -> String) async -> String {
        do throws(OAuthError) {
            _ = try await body()
            return "token"
        } catch {
            if error.kind == .authorization { return "authorization:\(error.oauthErrorCode ?? "nil")" }
            return "\(error.kind)"
        }
    }
}
