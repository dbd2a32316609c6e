import Foundation
import OAuth2
import Testing

@Suite("Token answers read defensively: lifetimes bounded, secrets never quoted back")
struct GrantRequestTests {
    @Test("expires_in: a number or a numeric string; negative, non-numeric or absurd values do not crash")
    func lifetimes() {
        let now = Date()
        func lifetime(_ json: String) -> Duration?? {
            GrantRequest.parseToken(Data(json.utf8), receivedAt: now).map(\.lifetime)
        }
        #expect(lifetime(#"{"access_token": "t", "expires_in": 3599}"#) == .some(.seconds(3599)))
        #expect(lifetime(#"{"access_token": "t", "expires_in": "60"}"#) == .some(.seconds(60)))
        #expect(lifetime(#"{"access_token": "t", "expires_in": -5}"#) == .some(nil))
        #expect(lifetime(#"{"access_token": "t", "expires_in": "soon"}"#) == .some(nil))
        #expect(lifetime(#"{"access_token": "t", "expires_in": 1e300}"#) == .some(.seconds(366 * 24 * 3600)))
        #expect(lifetime(#"{"access_token": "t"}"#) == .some(nil))
        #expect(lifetime(#"{"expires_in": 10}"#) == nil)
        #expect(lifetime("not json") == nil)
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
