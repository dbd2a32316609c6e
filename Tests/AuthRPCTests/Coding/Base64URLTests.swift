import AuthRPCSyntax
import Testing

@Suite("base64url")
struct Base64URLTests {
    @Test("decoding: the URL-safe alphabet, padding optional but complete, nothing else")
    func decodes() {
        #expect(Base64URL.decode("") == [])
        #expect(Base64URL.decode("AQAB") == [1, 0, 1])
        #expect(Base64URL.decode("-_8") == [0xFB, 0xFF])
        #expect(Base64URL.decode("QQ") == [0x41])
        #expect(Base64URL.decode("QQ==") == [0x41])
        #expect(Base64URL.decode("QUI=") == [0x41, 0x42])
        for bad in ["Q", "QQ=", "Q===", "====", "+/8", "QU I", "QUI\n", "QQ=A", "QUJD="] {
            #expect(Base64URL.decode(bad) == nil, "\(bad.debugDescription)")
        }
    }

    @Test("encoding: RFC 4648's vectors in the URL-safe alphabet, without padding")
    func encodes() {
        let vectors = [
            "": "", "f": "Zg", "fo": "Zm8", "foo": "Zm9v", "foob": "Zm9vYg", "fooba": "Zm9vYmE", "foobar": "Zm9vYmFy",
        ]
        for (plain, encoded) in vectors {
            #expect(Base64URL.encode(Array(plain.utf8)) == encoded, "\(plain)")
        }
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
        #expect(Base64URL.encode([1, 0, 1]) == "AQAB")
    }

    @Test("every string of up to 4 bytes drawn from edge values reads back")
    func roundTrip() {
        let values: [UInt8] = [0, 1, 0x3E, 0x3F, 0x7F, 0x80, 0xFB, 0xFF]
        var inputs: [[UInt8]] = [[]]
        var longest: [[UInt8]] = [[]]
        for _ in 1...4 {
            longest = longest.flatMap { prefix in values.map { prefix + [$0] } }
            inputs += longest
        }
        for input in inputs {
            let encoded = Base64URL.encode(input)
            #expect(!encoded.contains("=") && !encoded.contains("+") && !encoded.contains("/"))
            #expect(Base64URL.decode(encoded) == input, "\(input)")
        }
    }
}
