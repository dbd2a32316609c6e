import AuthRPCSyntax
import Testing

@testable import OAuth2

@Suite("Form encoding")
struct FormEncodingTests {
    @Test("every reserved character is percent-encoded; unreserved ones are not")
    func encodesReserved() {
        #expect(PercentEncoding.encodeUnreserved("a b%#[]&=+/?~._-Z9") == "a%20b%25%23%5B%5D%26%3D%2B%2F%3F~._-Z9")
        #expect(PercentEncoding.encodeUnreserved("é") == "%C3%A9")
    }

    @Test("decoding splits on the first = only, keeps duplicates and order, tolerates bad escapes")
    func decodes() {
        let pairs = FormEncoding.decode("a=1=2&b=%ZZ&a=3&c&d=x+y%20z")
        #expect(pairs.map(\.0) == ["a", "b", "a", "c", "d"])
        #expect(pairs.map(\.1) == ["1=2", "%ZZ", "3", "", "x y z"])
    }

    @Test("round trip through encode and decode")
    func roundTrip() {
        let pairs = [("k&=", "v %+#[]é"), ("empty", "")]
        let decoded = FormEncoding.decode(FormEncoding.encode(pairs))
        #expect(decoded.map(\.0) == pairs.map(\.0))
        #expect(decoded.map(\.1) == pairs.map(\.1))
    }
}
