import AuthCrypto
import Testing

@Suite("HMAC-SHA256 from OpenSSL")
struct HMACTests {
    func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
    }

    @Test("RFC 4231's test cases 1, 2, 3 and 6 (a key longer than the block is hashed first)")
    func rfc4231() throws {
        #expect(
            hex(try HMAC.sha256(key: [UInt8](repeating: 0x0b, count: 20), message: Array("Hi There".utf8)))
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        )
        #expect(
            hex(try HMAC.sha256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        )
        #expect(
            hex(
                try HMAC.sha256(
                    key: [UInt8](repeating: 0xaa, count: 20),
                    message: [UInt8](repeating: 0xdd, count: 50)
                )
            ) == "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
        )
        #expect(
            hex(
                try HMAC.sha256(
                    key: [UInt8](repeating: 0xaa, count: 131),
                    message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)
                )
            ) == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        )
    }

    @Test("an empty key and an empty message are valid inputs (as Python's hmac computes them)")
    func emptyInputs() throws {
        #expect(
            hex(try HMAC.sha256(key: [], message: []))
                == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad"
        )
        #expect(try HMAC.sha256(key: [0], message: []) == HMAC.sha256(key: [], message: []))
    }
}
