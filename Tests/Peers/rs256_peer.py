#!/usr/bin/env python3
"""An independent RS256 peer for AuthCrypto's tests, on pyca/cryptography (OpenSSL or not, its own
key generation, encodings and verification).

Each command reads one JSON object on stdin and writes one on stdout; binary values are
base64url without padding (as in JOSE).

    sign      {"bits": 2048, "messages": [B64URL, ...]}
              -> a fresh key in every public form a verifier may be handed, the private key
                 (PKCS#8, for the other direction), and its RS256 signature of each message:
                 {"bits", "spki_pem", "pkcs1_pem", "certificate_pem", "jwk": {"kty", "n", "e", ...},
                  "private_pem", "signatures": [B64URL, ...]}
    verify    {"public_pem": PEM, "items": [{"message": B64URL, "signature": B64URL}, ...]}
              -> {"results": [true | false, ...]}: whether each is an RS256 signature by that key
    jwks      {"count": 2, "claims": {...}}
              -> a JWKS document as Google's oauth2/v3/certs serves it, and a JWT signed by its
                 second key: {"jwks": TEXT, "token": COMPACT_JWS, "kid": KID}
    refused   {}
              -> public keys a verifier must refuse, each with the reason's words:
                 {"keys": [{"name", "pem" | "jwk", "reason"}, ...]}

Run with the project's .venv (make venv).
"""
import base64
import datetime
import json
import subprocess
import sys
import tempfile

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.x509.oid import NameOID


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def integer_b64url(value):
    """A JWK Base64urlUInt (RFC 7518 section 6.3.1): big-endian, as few octets as possible."""
    return b64url(value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big"))


def public_pem(public_key, form=serialization.PublicFormat.SubjectPublicKeyInfo):
    return public_key.public_bytes(serialization.Encoding.PEM, form).decode()


def certificate_pem(private_key, common_name):
    """A self-signed certificate carrying the key, as Google's oauth2/v1/certs publishes them."""
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    algorithm = None if isinstance(private_key, ed25519.Ed25519PrivateKey) else hashes.SHA256()
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(private_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(private_key, algorithm)
    )
    return certificate.public_bytes(serialization.Encoding.PEM).decode()


def jwk(public_key, kid):
    numbers = public_key.public_numbers()
    return {"kty": "RSA", "alg": "RS256", "use": "sig", "kid": kid,
            "n": integer_b64url(numbers.n), "e": integer_b64url(numbers.e)}


def rs256(private_key, message):
    return private_key.sign(message, padding.PKCS1v15(), hashes.SHA256())


def command_sign(request):
    bits = int(request.get("bits", 2048))
    key = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    public = key.public_key()
    return {
        "bits": key.key_size,
        "spki_pem": public_pem(public),
        "pkcs1_pem": public_pem(public, serialization.PublicFormat.PKCS1),
        "certificate_pem": certificate_pem(key, "rs256-peer"),
        "jwk": jwk(public, "rs256-peer"),
        "private_pem": key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                         serialization.NoEncryption()).decode(),
        "signatures": [b64url(rs256(key, unb64url(message))) for message in request.get("messages", [])],
    }


def command_verify(request):
    public = serialization.load_pem_public_key(request["public_pem"].encode())
    if not isinstance(public, rsa.RSAPublicKey):
        raise SystemExit("verify: not an RSA public key")
    results = []
    for item in request["items"]:
        try:
            public.verify(unb64url(item["signature"]), unb64url(item["message"]), padding.PKCS1v15(), hashes.SHA256())
            results.append(True)
        except InvalidSignature:
            results.append(False)
    return {"results": results}


def command_jwks(request):
    count = int(request.get("count", 2))
    keys = [rsa.generate_private_key(public_exponent=65537, key_size=2048) for _ in range(count)]
    kids = ["%040x" % (index + 1) for index in range(count)]
    document = {"keys": [jwk(key.public_key(), kid) for key, kid in zip(keys, kids)]}
    header = {"alg": "RS256", "kid": kids[-1], "typ": "JWT"}
    signing_input = b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(request.get("claims", {})).encode())
    token = signing_input + "." + b64url(rs256(keys[-1], signing_input.encode()))
    return {"jwks": json.dumps(document, indent=2), "token": token, "kid": kids[-1]}


def openssl_rsa_pss_public_pem():
    """An RSA-PSS key (id-RSASSA-PSS), which cryptography cannot generate: from the openssl CLI."""
    with tempfile.NamedTemporaryFile(suffix=".pem") as private:
        subprocess.run(["openssl", "genpkey", "-algorithm", "RSA-PSS", "-pkeyopt", "rsa_keygen_bits:2048",
                        "-out", private.name], check=True, capture_output=True)
        return subprocess.run(["openssl", "pkey", "-in", private.name, "-pubout"], check=True,
                              capture_output=True, text=True).stdout


def command_refused(_request):
    small = rsa.generate_private_key(public_exponent=65537, key_size=1024)
    p256 = ec.generate_private_key(ec.SECP256R1())
    edwards = ed25519.Ed25519PrivateKey.generate()
    keys = [
        {"name": "RSA 1024 SPKI", "pem": public_pem(small.public_key()), "reason": "has 1024 bits"},
        {"name": "RSA 1024 PKCS#1", "pem": public_pem(small.public_key(), serialization.PublicFormat.PKCS1),
         "reason": "has 1024 bits"},
        {"name": "RSA 1024 certificate", "pem": certificate_pem(small, "small"), "reason": "has 1024 bits"},
        {"name": "RSA 1024 JWK", "jwk": jwk(small.public_key(), "small"), "reason": "has 1024 bits"},
        {"name": "EC P-256 SPKI", "pem": public_pem(p256.public_key()), "reason": "is EC, not RSA"},
        {"name": "EC P-256 certificate", "pem": certificate_pem(p256, "ec"), "reason": "is EC, not RSA"},
        {"name": "Ed25519 SPKI", "pem": public_pem(edwards.public_key()), "reason": "is ED25519, not RSA"},
        {"name": "RSA-PSS SPKI", "pem": openssl_rsa_pss_public_pem(), "reason": "is RSA-PSS, not RSA"},
        {"name": "RSA 2048 private key", "pem": rsa.generate_private_key(public_exponent=65537, key_size=2048)
            .private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                           serialization.NoEncryption()).decode(),
         "reason": "holds a private key"},
    ]
    return {"keys": keys}


COMMANDS = {"sign": command_sign, "verify": command_verify, "jwks": command_jwks, "refused": command_refused}


def main(argv):
    if len(argv) != 2 or argv[1] not in COMMANDS:
        raise SystemExit("usage: rs256_peer.py {%s} < request.json" % "|".join(COMMANDS))
    request = json.loads(sys.stdin.read() or "{}")
    json.dump(COMMANDS[argv[1]](request), sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv)
