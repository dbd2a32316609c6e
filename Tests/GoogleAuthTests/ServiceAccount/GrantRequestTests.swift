import Foundation
import OAuth2
import Testing

@Suite("Token answers read defensively: lifetimes bounded, secrets never quoted back")
struct GrantRequestTests {
    @Test(
        "expires_in: a number or a numeric string; under a second or not a number is refused, absurd values are clamped, nothing crashes"
    )
    func lifetimes() {
        let now = Date()
        /// `nil` when the answer is refused; `.some(nil)` when it is taken without a lifetime.
        func lifetime(_ json: String) -> Duration?? {
            do {
                return .some(try GrantRequest.token(in: Data(json.utf8), receivedAt: now, from: "the test").lifetime)
            } catch {
                return nil
            }
        }
        #expect(lifetime(#"{"access_token": "t", "expires_in": 3599}"#) == .some(.seconds(3599)))
        #expect(lifetime(#"{"access_token": "t", "expires_in": "60"}"#) == .some(.seconds(60)))
        #expect(lifetime(#"{"access_token": "t", "expires_in": -5}"#) == nil)
        #expect(lifetime(#"{"access_token": "t", "expires_in": "soon"}"#) == nil)
        #expect(lifetime(#"{"access_token": "t", "expires_in": 1e300}"#) == .some(.seconds(365 * 24 * 3600)))
        #expect(lifetime(#"{"access_token": "t"}"#) == .some(nil))
        #expect(lifetime(#"{"expires_in": 10}"#) == nil)
        #expect(lifetime("not json") == nil)
    }

    @Test("an unusable token answer is a transient error naming the field, never the token")
    func unusableAnswer() {
        let token = "tok en-with-a-space"
        #expect {
            _ = try GrantRequest.token(
                in: Data(#"{"access_token": "\#(token)", "token_type": "Bearer"}"#.utf8),
                receivedAt: Date(),
                from: "the test"
            )
        } throws: { error in
            guard let error = error as? OAuthError else { return false }
            return error.kind == .transient && error.message.contains("access_token") && !error.message.contains(token)
        }
    }

    @Test("a server's error text is cut short and any secret of the request in it is redacted")
    func quoting() {
        let secret = "assertion-" + String(repeating: "x", count: 40)
        let quoted = GrantRequest.quoted("bad assertion \(secret) for you", hiding: [secret, ""])
        #expect(quoted == "bad assertion <redacted> for you")
        let long = GrantRequest.quoted(String(repeating: "y", count: 1000), hiding: [])
        #expect(long.count == GrantRequest.maximumQuotedLength + 1)
    }
}
