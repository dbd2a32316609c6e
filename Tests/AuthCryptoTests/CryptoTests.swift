import AuthCrypto
import AuthRPCSyntax
import Foundation
import TestSupport
import Testing

@Suite("Crypto from OpenSSL: SHA-256, random bytes, RSA keys and RS256")
struct CryptoTests {
    func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test("SHA-256: FIPS 180-4 vectors (empty, abc, two blocks, 1000 bytes)")
    func sha256() throws {
        #expect(hex(try SHA256.hash([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            hex(try SHA256.hash(Array("abc".utf8)))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        )
        #expect(
            hex(try SHA256.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        )
        #expect(
            hex(try SHA256.hash([UInt8](repeating: UInt8(ascii: "a"), count: 1000)))
                == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"
        )
    }

    @Test("random bytes: the count asked for, different every time, a negative count refused")
    func randomBytes() throws {
        let a = try SecureRandom.bytes(32)
        let b = try SecureRandom.bytes(32)
        #expect(a.count == 32 && b.count == 32)
        #expect(a != b)
        #expect(try SecureRandom.bytes(0).isEmpty)
        #expect(throws: CryptoError.self) { try SecureRandom.bytes(-1) }
    }

    @Test("RS256 with RFC 7515 A.2's key gives the RFC's signature, from PKCS#8 and from PKCS#1 PEM")
    func rs256KnownAnswer() throws {
        for pem in [RFC7515Key.pkcs8, RFC7515Key.pkcs1] {
            let key = try RSAPrivateKey(pem: pem)
            #expect(key.bitCount == 2048)
            let signature = try key.signRS256(Array(RFC7515Key.signingInput.utf8))
            #expect(Base64URL.encode(signature) == RFC7515Key.signature)
        }
    }

    @Test("one key signs from many tasks at once, every signature the known answer")
    func concurrentSigning() async throws {
        let key = try RSAPrivateKey(pem: RFC7515Key.pkcs8)
        let input = Array(RFC7515Key.signingInput.utf8)
        let signatures = try await withThrowingTaskGroup(of: [UInt8].self) { group in
            for _ in 0..<64 { group.addTask { try key.signRS256(input) } }
            return try await group.reduce(into: Set<[UInt8]>()) { $0.insert($1) }
        }
        #expect(signatures.map { Base64URL.encode($0) } == [RFC7515Key.signature])
    }

    @Test("keys that are not usable RSA private keys are refused with a reason, never quoting the PEM")
    func refusedKeys() throws {
        let encrypted = """
            -----BEGIN ENCRYPTED PRIVATE KEY-----
            MIIFNTBfBgkqhkiG9w0BBQ0wUjAxBgkqhkiG9w0BBQwwJAQQML4cd1/M8/J9Psmm
            -----END ENCRYPTED PRIVATE KEY-----
            """
        let pkcs8Body = RFC7515Key.pkcs8.split(separator: "\n").dropFirst().dropLast()
        let damaged =
            "-----BEGIN PRIVATE KEY-----\n" + pkcs8Body.dropLast(3).joined(separator: "\n")
            + "\n-----END PRIVATE KEY-----\n"
        let cases: [(pem: String, reason: String)] = [
            ("", "no PEM private key"),
            ("not a key at all", "no PEM private key"),
            (damaged, "no PEM private key"),
            (RefusedKeys.ecP256, "is EC, not RSA"),
            (RefusedKeys.rsa1024, "has 1024 bits"),
            (encrypted, "is encrypted"),
        ]
        for (pem, reason) in cases {
            do {
                _ = try RSAPrivateKey(pem: pem)
                Issue.record("accepted a key that should be refused (\(reason))")
            } catch {
                #expect(error.description.contains(reason), "\(error)")
                for line in pem.split(separator: "\n") where line.count > 16 && !line.hasPrefix("-----") {
                    #expect(!error.description.contains(line))
                }
            }
        }
    }

    @Test("a key's description names its size only")
    func description() throws {
        let key = try RSAPrivateKey(pem: RFC7515Key.pkcs8)
        #expect(key.description == "RSAPrivateKey(2048 bits)")
        #expect("\(key)" == "RSAPrivateKey(2048 bits)")
    }
}
