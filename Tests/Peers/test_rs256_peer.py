"""Self-test for rs256_peer.py: runs each command as the Swift tests do and checks its answers
with pyca/cryptography and the openssl command line, so a broken peer cannot pass for a verifier.

Run: .venv/bin/python -m unittest Tests/Peers/test_rs256_peer.py -v   (from the package root)
"""

import base64
import json
import os
import subprocess
import sys
import unittest

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rs256_peer.py")


def run(command, request):
    result = subprocess.run([sys.executable, PEER, command], input=json.dumps(request), capture_output=True,
                            text=True, check=True, timeout=120)
    return json.loads(result.stdout)


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class RS256PeerTests(unittest.TestCase):
    def test_sign_gives_one_key_in_every_form_and_signatures_that_verify(self):
        messages = [b"", b"abc", bytes(range(256)) * 10]
        answer = run("sign", {"bits": 2048, "messages": [b64url(m) for m in messages]})
        self.assertEqual(answer["bits"], 2048)
        spki = serialization.load_pem_public_key(answer["spki_pem"].encode())
        pkcs1 = serialization.load_pem_public_key(answer["pkcs1_pem"].encode())
        certificate = x509.load_pem_x509_certificate(answer["certificate_pem"].encode()).public_key()
        private = serialization.load_pem_private_key(answer["private_pem"].encode(), None)
        numbers = spki.public_numbers()
        for other in (pkcs1, certificate, private.public_key()):
            self.assertEqual(other.public_numbers(), numbers)
        jwk = answer["jwk"]
        self.assertEqual((jwk["kty"], jwk["alg"]), ("RSA", "RS256"))
        self.assertEqual(int.from_bytes(unb64url(jwk["n"]), "big"), numbers.n)
        self.assertEqual(jwk["e"], "AQAB")
        self.assertNotEqual(unb64url(jwk["n"])[0], 0, "Base64urlUInt has no leading zero octet")
        self.assertEqual(len(answer["signatures"]), len(messages))
        for message, signature in zip(messages, answer["signatures"]):
            spki.verify(unb64url(signature), message, padding.PKCS1v15(), hashes.SHA256())

    def test_verify_says_yes_to_a_good_signature_and_no_to_a_changed_one(self):
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                            serialization.PublicFormat.SubjectPublicKeyInfo).decode()
        signature = key.sign(b"message", padding.PKCS1v15(), hashes.SHA256())
        changed = bytes([signature[0] ^ 1]) + signature[1:]
        items = [{"message": b64url(b"message"), "signature": b64url(signature)},
                 {"message": b64url(b"message"), "signature": b64url(changed)},
                 {"message": b64url(b"other"), "signature": b64url(signature)}]
        self.assertEqual(run("verify", {"public_pem": pem, "items": items})["results"], [True, False, False])

    def test_jwks_token_is_signed_by_the_key_its_kid_names(self):
        answer = run("jwks", {"count": 2, "claims": {"sub": "1"}})
        document = json.loads(answer["jwks"])
        self.assertEqual(len(document["keys"]), 2)
        header, payload, signature = answer["token"].split(".")
        self.assertEqual(json.loads(unb64url(header)), {"alg": "RS256", "kid": answer["kid"], "typ": "JWT"})
        self.assertEqual(json.loads(unb64url(payload)), {"sub": "1"})
        outcomes = {}
        for entry in document["keys"]:
            public = rsa.RSAPublicNumbers(int.from_bytes(unb64url(entry["e"]), "big"),
                                          int.from_bytes(unb64url(entry["n"]), "big")).public_key()
            try:
                public.verify(unb64url(signature), (header + "." + payload).encode(), padding.PKCS1v15(),
                              hashes.SHA256())
                outcomes[entry["kid"]] = True
            except InvalidSignature:
                outcomes[entry["kid"]] = False
        self.assertEqual([kid for kid, verified in outcomes.items() if verified], [answer["kid"]])

    def test_refused_keys_are_what_their_names_say(self):
        keys = {entry["name"]: entry for entry in run("refused", {})["keys"]}
        self.assertEqual(len(keys), 9)
        for name in ("RSA 1024 SPKI", "RSA 1024 PKCS#1"):
            self.assertEqual(serialization.load_pem_public_key(keys[name]["pem"].encode()).key_size, 1024)
        small_certificate = x509.load_pem_x509_certificate(keys["RSA 1024 certificate"]["pem"].encode())
        self.assertEqual(small_certificate.public_key().key_size, 1024)
        self.assertEqual(len(unb64url(keys["RSA 1024 JWK"]["jwk"]["n"])) * 8, 1024)
        self.assertIn("BEGIN PRIVATE KEY", keys["RSA 2048 private key"]["pem"])
        # openssl's own reading of the RSA-PSS key: id-RSASSA-PSS, not rsaEncryption.
        text = subprocess.run(["openssl", "asn1parse"], input=keys["RSA-PSS SPKI"]["pem"],
                              capture_output=True, text=True, check=True).stdout
        self.assertIn("rsassaPss", text)
        self.assertNotIn("rsaEncryption", text)
        for name in ("EC P-256 SPKI", "Ed25519 SPKI"):
            self.assertNotIsInstance(serialization.load_pem_public_key(keys[name]["pem"].encode()), rsa.RSAPublicKey)


if __name__ == "__main__":
    unittest.main()
