import AuthRPCSyntax
import Foundation
import TestSupport
import Testing

@testable import AuthCrypto

/// The package signs RS256 and never verifies it (the services it sends JWTs to do), so
/// pyca/cryptography (`Tests/Peers/rs256_peer.py`) is the verifier of its signatures.
@Suite("RS256 signatures, verified by pyca/cryptography")
struct RS256PeerTests {
    @Test("our RS256 signatures verify with pyca/cryptography, and flipped ones do not")
    func weSignPeerVerifies() async throws {
        let generated = try await RS256Peer.run("sign", ["bits": 3072])
        let signers: [(privatePEM: String, publicPEM: String)] = [
            (RFC7515Key.pkcs8, RFC7515Key.publicKeyPEM),
            (try #require(generated["private_pem"] as? String), try #require(generated["spki_pem"] as? String)),
        ]
        let rfcMessage = Array(RFC7515Key.signingInput.utf8)
        for (privatePEM, publicPEM) in signers {
            let signer = try RSAPrivateKey(pem: privatePEM)
            let messages: [[UInt8]] = [[], Array("payload".utf8), rfcMessage, [UInt8](repeating: 0xA5, count: 10_000)]
            var items: [[String: String]] = []
            var expected: [Bool] = []
            for message in messages {
                let signature = try signer.signRS256(message)
                items.append(["message": Base64URL.encode(message), "signature": Base64URL.encode(signature)])
                expected.append(true)
                var flipped = signature
                flipped[flipped.count / 2] ^= 0x10
                items.append(["message": Base64URL.encode(message), "signature": Base64URL.encode(flipped)])
                expected.append(false)
            }
            let answer = try await RS256Peer.run("verify", ["public_pem": publicPEM, "items": items])
            #expect(answer["results"] as? [Bool] == expected, "\(signer)")
        }
    }
}
