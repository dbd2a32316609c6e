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
        let ecKey = """
            -----BEGIN PRIVATE KEY-----
            MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg7UxypdOXKtrk5pBp
            yi9roX+S3wk5EptKvz+ZR4DnK+ehRANCAATZXDcXjDm0HIpiqBamJkQqZk8zPZHj
            oF6P7j/c7D4FXl90JbD1L7u5IwxI+eiZGKIlspkxwhF+Bc0T1eBx8UIH
            -----END PRIVATE KEY-----
            """
        let small = """
            -----BEGIN PRIVATE KEY-----
            MIICeAIBADANBgkqhkiG9w0BAQEFAASCAmIwggJeAgEAAoGBANiamtYs4AKy7Bqi
            1iLp33IUImwvwkfYaZQs7yazPTtRaBP2/g3BnL4G7/0FGBdWmPThK/ClcerXca1H
            lhAYSKpfh0JtwuEfRtjGML4aqBzltBwYVSqoNbis9FExD4cLvB7e4yekntJHyG/9
            nBjR0mxurHuETpBuxzKUysrBb1nFAgMBAAECgYEAoWBWeblHUFtzksi9F5f9FOYx
            Wz8d1R9EUdREfSXPOfGFxFIhp6gXGnDavjzcXQ70uIVGkm0A+YF4PSx3fhhJkd67
            I5ZS4dYGHUxwMX0mWUx6HoS3q9jEh1ps2B/qk+YYgKhnSeMNZxlaJCKOBhIEwvCj
            NfRnRUFtTSGt9yV9PsECQQDy31L1ajufQvisABee4UAOnrZDJIwHtpNQxXWgqM7q
            CeqwuTKHaxymq776NFCGJsiaLtoy4rIuSBNXm6kyZ5U1AkEA5E/MhehPIfIK0cK5
            2BdXIlLd40rns5r9qmL4YCgeae6cF4OwniLnpht+VgdtskGC6DrXeZuXfR5T+9MI
            kB0UUQJBAInEIjOxseZSP+qZFsz56rMgVjTZ61CIwSGlEGc0ukJJo8XhF4d3O8ZT
            T75vpGmkYFANWZpZu0bDfa1JT/2Wgi0CQQCqZgh+dLkC29RJY+0yo5Dr1C85IcG2
            odnrHjzD/41bgLPNNQNPsztzFRgAe0DbBtv+GVSStZal0knaLFI6xQlRAkBv0cl3
            zRc2B+N/vMwF6BlRhID2Rd/kVkobSMw2WkC44IuBVINQRYkCG37Az9vrpUM2IyZi
            iSWv5dyWwwN66JIS
            -----END PRIVATE KEY-----
            """
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
            (ecKey, "is EC, not RSA"),
            (small, "has 1024 bits"),
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
