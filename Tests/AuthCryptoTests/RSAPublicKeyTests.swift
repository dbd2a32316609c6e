import Foundation
import TestSupport
import Testing

@testable import AuthCrypto

/// RS256 verification: RFC 7515's example, every flipped bit, and pyca/cryptography
/// (`Tests/Peers/rs256_peer.py`) as the independent peer in both directions.
@Suite("RSA public keys and RS256 verification")
struct RSAPublicKeyTests {
    /// The RFC 7515 A.2 key in each form a verifier can be handed.
    func rfcKeys() throws -> [(form: String, key: RSAPublicKey)] {
        [
            ("JWK", try RSAPublicKey(jwkModulus: RFC7515Key.jwkModulus, exponent: RFC7515Key.jwkExponent)),
            ("SubjectPublicKeyInfo PEM", try RSAPublicKey(pem: RFC7515Key.publicKeyPEM)),
            ("PKCS#1 PEM", try RSAPublicKey(pem: RFC7515Key.rsaPublicKeyPEM)),
            ("private key's public half", try RSAPrivateKey(pem: RFC7515Key.pkcs8).publicKey),
        ]
    }

    var rfcMessage: [UInt8] { Array(RFC7515Key.signingInput.utf8) }
    var rfcSignature: [UInt8] { JOSEBase64.decode(RFC7515Key.signature)! }

    /// Lines of base64 (or base64url) key material in `text`, to check that no message quotes them.
    func keyMaterial(_ text: String) -> [Substring] {
        text.split(whereSeparator: { $0 == "\n" || $0 == "\"" }).filter { $0.count >= 16 && !$0.hasPrefix("-----") }
    }

    @Test("RFC 7515 A.2's RS256 example verifies with the RFC's JWK, its PEM forms and the private key's half")
    func rfcExample() throws {
        for (form, key) in try rfcKeys() {
            #expect(key.bitCount == 2048, "\(form)")
            #expect(key.verifyRS256(signature: rfcSignature, message: rfcMessage), "\(form)")
            #expect(key.description == "RSAPublicKey(2048 bits)")
        }
    }

    @Test("every flipped bit of the message or the signature, and every wrong length, fails")
    func flippedBits() throws {
        let key = try RSAPublicKey(jwkModulus: RFC7515Key.jwkModulus, exponent: RFC7515Key.jwkExponent)
        let message = rfcMessage
        let signature = rfcSignature
        for bit in 0..<(message.count * 8) {
            var changed = message
            changed[bit / 8] ^= 1 << (bit % 8)
            #expect(!key.verifyRS256(signature: signature, message: changed), "message bit \(bit)")
        }
        for bit in 0..<(signature.count * 8) {
            var changed = signature
            changed[bit / 8] ^= 1 << (bit % 8)
            #expect(!key.verifyRS256(signature: changed, message: message), "signature bit \(bit)")
        }
        let modulus = try #require(JOSEBase64.decode(RFC7515Key.jwkModulus))
        for wrong in [
            [], Array(signature.dropLast()), signature + [0], [0] + signature, [UInt8](repeating: 0, count: 256),
            [UInt8](repeating: 0xFF, count: 256), modulus,
        ] {
            #expect(!key.verifyRS256(signature: wrong, message: message), "\(wrong.count) bytes")
        }
        #expect(!key.verifyRS256(signature: signature, message: message + [0]))
        #expect(!key.verifyRS256(signature: signature, message: []))
        // And the right pair still verifies after all those refusals (no state left behind).
        #expect(key.verifyRS256(signature: signature, message: message))
    }

    @Test("keys pyca/cryptography generates (2048, 3072, 4096 bits) sign; each of their public forms verifies")
    func peerSignsWeVerify() async throws {
        let messages: [[UInt8]] = [
            [], Array("abc".utf8), (0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }, rfcMessage,
        ]
        for bits in [2048, 3072, 4096] {
            let answer = try await RS256Peer.run(
                "sign",
                ["bits": bits, "messages": messages.map(JOSEBase64.encode)]
            )
            let signatures = try #require(answer["signatures"] as? [String]).compactMap(JOSEBase64.decode)
            #expect(signatures.count == messages.count)
            let jwk = try #require(answer["jwk"] as? [String: Any])
            let keys: [(String, RSAPublicKey)] = [
                ("SPKI", try RSAPublicKey(pem: try #require(answer["spki_pem"] as? String))),
                ("PKCS#1", try RSAPublicKey(pem: try #require(answer["pkcs1_pem"] as? String))),
                ("certificate", try RSAPublicKey(pem: try #require(answer["certificate_pem"] as? String))),
                (
                    "JWK",
                    try RSAPublicKey(
                        jwkModulus: try #require(jwk["n"] as? String),
                        exponent: try #require(jwk["e"] as? String)
                    )
                ),
            ]
            for (form, key) in keys {
                #expect(key.bitCount == bits, "\(form)")
                for (index, message) in messages.enumerated() {
                    #expect(
                        key.verifyRS256(signature: signatures[index], message: message),
                        "\(bits) \(form) #\(index)"
                    )
                    // Another message's signature does not.
                    let other = signatures[(index + 1) % signatures.count]
                    #expect(!key.verifyRS256(signature: other, message: message), "\(bits) \(form) #\(index)")
                }
            }
            // The RFC key does not verify this key's signatures.
            #expect(
                !(try RSAPublicKey(pem: RFC7515Key.publicKeyPEM)).verifyRS256(
                    signature: signatures[3],
                    message: rfcMessage
                )
            )
        }
    }

    @Test("our RS256 signatures verify with pyca/cryptography, and flipped ones do not")
    func weSignPeerVerifies() async throws {
        let generated = try await RS256Peer.run("sign", ["bits": 3072])
        let signers: [(privatePEM: String, publicPEM: String)] = [
            (RFC7515Key.pkcs8, RFC7515Key.publicKeyPEM),
            (try #require(generated["private_pem"] as? String), try #require(generated["spki_pem"] as? String)),
        ]
        for (privatePEM, publicPEM) in signers {
            let signer = try RSAPrivateKey(pem: privatePEM)
            let messages: [[UInt8]] = [[], Array("payload".utf8), rfcMessage, [UInt8](repeating: 0xA5, count: 10_000)]
            var items: [[String: String]] = []
            var expected: [Bool] = []
            for message in messages {
                let signature = try signer.signRS256(message)
                #expect(try signer.publicKey.verifyRS256(signature: signature, message: message))
                items.append(["message": JOSEBase64.encode(message), "signature": JOSEBase64.encode(signature)])
                expected.append(true)
                var flipped = signature
                flipped[flipped.count / 2] ^= 0x10
                items.append(["message": JOSEBase64.encode(message), "signature": JOSEBase64.encode(flipped)])
                expected.append(false)
            }
            let answer = try await RS256Peer.run("verify", ["public_pem": publicPEM, "items": items])
            #expect(answer["results"] as? [Bool] == expected, "\(signer)")
        }
    }

    @Test("a JWT signed by a key of a JWKS document verifies with the key its kid names, not with the others")
    func jwksDocument() async throws {
        let answer = try await RS256Peer.run(
            "jwks",
            ["count": 3, "claims": ["iss": "https://issuer.example", "sub": "1"]]
        )
        let document = try #require(answer["jwks"] as? String)
        let token = try #require(answer["token"] as? String)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        #expect(parts.count == 3)
        let headerBytes = try #require(JOSEBase64.decode(parts[0]))
        let header = try #require(try JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any])
        let kid = try #require(header["kid"] as? String)
        #expect(kid == answer["kid"] as? String)
        let keys = try #require(
            (try JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any])?["keys"] as? [[String: Any]]
        )
        #expect(keys.count == 3)
        let signingInput = Array("\(parts[0]).\(parts[1])".utf8)
        let signature = try #require(JOSEBase64.decode(parts[2]))
        for entry in keys {
            #expect(entry["kty"] as? String == "RSA" && entry["alg"] as? String == "RS256")
            let key = try RSAPublicKey(
                jwkModulus: try #require(entry["n"] as? String),
                exponent: try #require(entry["e"] as? String)
            )
            #expect(key.verifyRS256(signature: signature, message: signingInput) == (entry["kid"] as? String == kid))
        }
    }

    @Test("small, non-RSA and private keys from pyca/cryptography and openssl are refused with the reason")
    func peerKeysRefused() async throws {
        let answer = try await RS256Peer.run("refused")
        let cases = try #require(answer["keys"] as? [[String: Any]])
        #expect(cases.count == 9)
        for entry in cases {
            let name = entry["name"] as? String ?? "?"
            let reason = try #require(entry["reason"] as? String)
            let material: [Substring]
            let error: CryptoError?
            if let pem = entry["pem"] as? String {
                material = keyMaterial(pem)
                error = #expect(throws: CryptoError.self, "\(name)") { try RSAPublicKey(pem: pem) }
            } else {
                let jwk = try #require(entry["jwk"] as? [String: String])
                material = [Substring(jwk["n"] ?? "")]
                error = #expect(throws: CryptoError.self, "\(name)") {
                    try RSAPublicKey(jwkModulus: jwk["n"] ?? "", exponent: jwk["e"] ?? "")
                }
            }
            let description = error?.description ?? ""
            #expect(description.contains(reason), "\(name): \(description)")
            #expect(!material.isEmpty)
            for line in material {
                #expect(!description.contains(line), "\(name) quotes its key")
            }
        }
    }

    @Test("numbers no RSA key has, and text that is not base64url, are refused with the reason")
    func badNumbersRefused() throws {
        let modulus = try #require(JOSEBase64.decode(RFC7515Key.jwkModulus))
        var even = modulus
        even[even.count - 1] &= 0xFE
        let cases: [(modulus: [UInt8], exponent: [UInt8], reason: String)] = [
            (modulus, [0x01], "public exponent is not odd"),
            (modulus, [0x00], "public exponent is not odd"),
            (modulus, [0x01, 0x00, 0x00], "public exponent is not odd"),
            (modulus, [0x01] + [UInt8](repeating: 0, count: 7) + [0x01], "public exponent is not odd"),
            (modulus, [], "public exponent is not odd"),
            (even, [0x01, 0x00, 0x01], "modulus is even"),
            ([], [0x01, 0x00, 0x01], "has 0 bits"),
            ([0xFF] + modulus.suffix(127), [0x01, 0x00, 0x01], "has 1024 bits"),
            ([0x01] + [UInt8](repeating: 0, count: 2049), [0x01, 0x00, 0x01], "numbers are larger"),
            ([0x01] + [UInt8](repeating: 0, count: 2047) + [0x01], [0x01, 0x00, 0x01], "has 16385 bits"),
        ]
        for (modulus, exponent, reason) in cases {
            let error = #expect(throws: CryptoError.self, "\(reason)") {
                try RSAPublicKey(modulus: modulus, exponent: exponent)
            }
            #expect(error?.description.contains(reason) == true, "\(error?.description ?? "") \(reason)")
        }
        // Leading zero bytes do not change the number; e = 3 is an RSA exponent.
        #expect(try RSAPublicKey(modulus: [0, 0] + modulus, exponent: [0, 1, 0, 1]).bitCount == 2048)
        #expect(try RSAPublicKey(modulus: modulus, exponent: [3]).bitCount == 2048)
        for (n, e) in [
            ("ab+c" + RFC7515Key.jwkModulus, "AQAB"), (RFC7515Key.jwkModulus + " ", "AQAB"),
            (RFC7515Key.jwkModulus + "AAA", "AQAB"), (RFC7515Key.jwkModulus, "AQ/B"), (RFC7515Key.jwkModulus, "AQAB="),
            (String(repeating: "A", count: 3_000), "AQAB"), (RFC7515Key.jwkModulus, String(repeating: "A", count: 17)),
        ] {
            let error = #expect(throws: CryptoError.self, "\(n.suffix(8)) \(e)") {
                try RSAPublicKey(jwkModulus: n, exponent: e)
            }
            #expect(error?.description.contains("base64url") == true)
            #expect(error?.description.contains(RFC7515Key.jwkModulus.prefix(16)) == false)
        }
    }

    @Test("PEM text that holds no public key is refused with the reason, never quoting it")
    func badPEMRefused() throws {
        let body = RFC7515Key.publicKeyPEM.split(separator: "\n").dropFirst().dropLast()
        let cases: [(pem: String, reason: String)] = [
            ("", "no PEM block"),
            ("MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAofgWCuLjybRlzo0tZWJj", "no PEM block"),
            ("-----BEGIN PUBLIC KEY-----\n" + body.joined(separator: "\n"), "no matching END"),
            (
                "-----BEGIN PUBLIC KEY-----\n" + body.dropLast(2).joined(separator: "\n")
                    + "\n-----END PUBLIC KEY-----",
                "PUBLIC KEY block could not be read"
            ),
            (
                "-----BEGIN CERTIFICATE-----\n" + body.joined(separator: "\n") + "\n-----END CERTIFICATE-----",
                "CERTIFICATE block could not be read"
            ),
            (
                "-----BEGIN CERTIFICATE-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00112233445566778899AABBCCDDEEFF\n\n"
                    + body.joined(separator: "\n") + "\n-----END CERTIFICATE-----",
                "CERTIFICATE block could not be read"
            ),
            (
                "-----BEGIN PUBLIC KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00112233445566778899AABBCCDDEEFF\n\n"
                    + body.joined(separator: "\n") + "\n-----END PUBLIC KEY-----",
                "PUBLIC KEY block could not be read"
            ),
            (RFC7515Key.pkcs8, "holds a private key"),
            (RFC7515Key.pkcs1, "holds a private key"),
            ("-----BEGIN X509 CRL-----\nAAAA\n-----END X509 CRL-----", "first block (X509 CRL) is not a public key"),
            ("-----BEGIN \u{1B}[31m-----\nAAAA\n-----END \u{1B}[31m-----", "first block (?) is not a public key"),
        ]
        for (pem, reason) in cases {
            let error = #expect(throws: CryptoError.self, "\(reason)") { try RSAPublicKey(pem: pem) }
            let description = error?.description ?? ""
            #expect(description.contains(reason), "\(description)")
            for line in keyMaterial(pem) + keyMaterial(RFC7515Key.pkcs8) {
                #expect(!description.contains(line))
            }
        }
        // Text around the block, and a second block after it, are ignored.
        let wrapped = "Google's key:\n" + RFC7515Key.publicKeyPEM + "\n" + RFC7515Key.pkcs8 + "\ntrailer"
        #expect(try RSAPublicKey(pem: wrapped).verifyRS256(signature: rfcSignature, message: rfcMessage))
    }

    @Test("one key verifies from many tasks at once")
    func concurrentVerification() async throws {
        let key = try RSAPublicKey(pem: RFC7515Key.publicKeyPEM)
        let message = rfcMessage
        let signature = rfcSignature
        let results = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<64 {
                group.addTask {
                    index % 2 == 0
                        ? key.verifyRS256(signature: signature, message: message)
                        : !key.verifyRS256(signature: signature, message: message + [UInt8(index)])
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.count == 64 && results.allSatisfy { $0 })
    }

    @Test("base64url: the URL-safe alphabet, padding optional but complete, nothing else")
    func base64URL() {
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
}
