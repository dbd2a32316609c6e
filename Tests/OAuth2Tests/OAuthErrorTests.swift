import Foundation
import Testing

@testable import OAuth2

@Suite("OAuthError and its kinds")
struct OAuthErrorTests {
    static let kinds: [(OAuthError.Kind, String)] = [
        (.authorization, "authorization"), (.noRefreshToken, "noRefreshToken"), (.transient, "transient"),
        (.invalidConfiguration, "invalidConfiguration"), (.flowFailed, "flowFailed"), (.storage, "storage"),
    ]

    @Test("each kind equals only itself, hashes apart, and prints its name")
    func kindsAreDistinct() {
        for (index, (kind, name)) in Self.kinds.enumerated() {
            #expect(kind.description == name)
            for (otherIndex, (other, _)) in Self.kinds.enumerated() {
                #expect((kind == other) == (index == otherIndex), "\(kind) vs \(other)")
            }
        }
        #expect(Set(Self.kinds.map(\.0)).count == Self.kinds.count)
    }

    @Test("an authorization error keeps its OAuth error code apart from its kind; other kinds have none")
    func oauthErrorCode() {
        let refused = OAuthError(.authorization, "refused", oauthErrorCode: "invalid_grant")
        #expect(refused.kind == .authorization)
        #expect(refused.oauthErrorCode == "invalid_grant")
        #expect(refused.description == "refused")
        #expect(OAuthError(.transient, "later").oauthErrorCode == nil)
    }

    @Test("the token endpoint's refusal is an authorization error carrying the server's code, secrets redacted")
    func refusalFromTheTokenEndpoint() throws {
        let url = URL(string: "https://issuer.test/token")!
        let body = Data(#"{"error":"invalid_grant rt-secret","error_description":"gone"}"#.utf8)
        let error = #expect(throws: OAuthError.self) {
            try TokenAnswer.classify(
                OAuthHTTPResponse(statusCode: 400, headers: [:], body: body),
                from: url,
                hiding: ["rt-secret"]
            )
        }
        #expect(error?.kind == .authorization)
        #expect(error?.oauthErrorCode == "invalid_grant <redacted>")
        #expect(error?.requiresReauthorization == true)

        let unavailable = #expect(throws: OAuthError.self) {
            try TokenAnswer.classify(
                OAuthHTTPResponse(
                    statusCode: 400,
                    headers: [:],
                    body: Data(#"{"error":"temporarily_unavailable"}"#.utf8)
                ),
                from: url,
                hiding: []
            )
        }
        #expect(unavailable?.kind == .transient)
        #expect(unavailable?.oauthErrorCode == nil)
    }
}
