"""Google service accounts for the sandbox: keys in Google's exact JSON format, and the checks
Google makes on what those keys sign.

A service account here is an email, a numeric client id, a fresh RSA-2048 key (per account, per
run) with its `private_key_id`, and a self-signed X.509 certificate of the public half (what
Google publishes at `client_x509_cert_url`). Two things verify signatures made with the key:

- the issuer's JWT bearer grant (RFC 7523; see issuer.py), and
- `ServiceAccounts.verify_jwt_access`, which the gRPC test service uses for self-signed JWTs
  (Google's "JWT access": a JWT used directly as the bearer token, no token endpoint).

Private keys never leave this process except in the key files written for the tests (mode 0600),
and no token, assertion or key is ever logged.
"""

import datetime
import json
import logging
import os
import secrets
import threading
import time

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import RSAKey

log = logging.getLogger("sandbox.service_accounts")

PROJECT_ID = "sandbox-project"
#: Google refuses JWTs (assertions and self-signed access tokens) that live longer than an hour.
MAX_JWT_LIFETIME = 3600
#: Clock skew tolerated on `iat` and `exp`.
LEEWAY = 60


class ServiceAccount:
    """One service account and its one key."""

    def __init__(self, name, project_id):
        self.email = f"{name}@{project_id}.iam.gserviceaccount.com"
        self.project_id = project_id
        self.client_id = str(10 ** 20 + secrets.randbelow(9 * 10 ** 20))  # 21 digits, like Google's
        self.key_id = secrets.token_hex(20)  # 40 hex digits, like Google's private_key_id
        self._private_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.public_key_pem = self._private_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
        self.certificate_pem = self._self_signed_certificate()

    def _self_signed_certificate(self):
        now = datetime.datetime.now(datetime.timezone.utc)
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, self.client_id)])
        certificate = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self._private_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=7))
            .sign(self._private_key, hashes.SHA256())
        )
        return certificate.public_bytes(serialization.Encoding.PEM).decode()

    def key_document(self, token_uri, auth_uri, certs_url):
        """The key file Google's console and `gcloud iam service-accounts keys create` write."""
        private_key = self._private_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
        return {
            "type": "service_account",
            "project_id": self.project_id,
            "private_key_id": self.key_id,
            "private_key": private_key,
            "client_email": self.email,
            "client_id": self.client_id,
            "auth_uri": auth_uri,
            "token_uri": token_uri,
            "auth_provider_x509_cert_url": f"{certs_url}/oauth2/v1/certs",
            "client_x509_cert_url": f"{certs_url}/robot/v1/metadata/x509/{self.email.replace('@', '%40')}",
            "universe_domain": "googleapis.com",
        }

    def public_jwk(self):
        return RSAKey.import_key(self.public_key_pem)


class ServiceAccounts:
    """Every service account the sandbox knows, behind one lock."""

    def __init__(self, project_id=PROJECT_ID):
        self.project_id = project_id
        self._lock = threading.Lock()
        self._by_email = {}

    def create(self, name=None):
        account = ServiceAccount(name or f"sa-{secrets.token_hex(4)}", self.project_id)
        with self._lock:
            self._by_email[account.email] = account
        log.info("created service account %s (key %s)", account.email, account.key_id)
        return account

    def get(self, email):
        if not isinstance(email, str):
            return None
        with self._lock:
            return self._by_email.get(email)

    def verify_jwt_access(self, token, audiences):
        """Checks a self-signed JWT used as a bearer token, the way Google's front ends do.

        The header must say RS256 and, when it has a `kid`, name the key of the account in `iss`
        (without one, the account's key is tried, as Google does); `iss` and
        `sub` are that account's email; the signature must verify with the key's public half;
        `aud` must be one of `audiences` (`https://<host>/`), or, without `aud`, a `scope` claim
        must say what the token is for; `iat` not in the future, `exp` not past, and at most an
        hour between them. Returns the caller's identity, or None with the reason logged (never
        the token).
        """
        try:
            unverified = jws.extract_compact(token.encode("ascii"))
            header = unverified.headers()
            claims = json.loads(unverified.payload)
        except (JoseError, ValueError, UnicodeError):
            return None  # not a JWT: not ours to judge
        if not isinstance(claims, dict):
            return None
        account = self.get(claims.get("iss"))
        if account is None:
            log.info("self-signed JWT refused: unknown issuer")
            return None
        reason = self._check(account, header, claims, token, audiences)
        if reason is not None:
            log.info("self-signed JWT of %s refused: %s", account.email, reason)
            return None
        return {"user": account.email, "sub": account.client_id, "scope": claims.get("scope", ""),
                "client_id": account.email, "audience": claims.get("aud")}

    @staticmethod
    def _check(account, header, claims, token, audiences):
        if header.get("alg") != "RS256":
            return f"alg is {header.get('alg')!r}, not RS256"
        if header.get("kid") not in (None, account.key_id):
            return "kid is not the account's private_key_id"
        try:
            jws.deserialize_compact(token, account.public_jwk(), algorithms=["RS256"])
        except (JoseError, ValueError):
            return "the signature does not verify with the account's public key"
        if claims.get("sub") != account.email:
            return "sub is not the account's email"
        audience = claims.get("aud")
        if audience is None:
            if not isinstance(claims.get("scope"), str) or not claims["scope"].strip():
                return "neither aud nor scope is present"
        elif audience not in audiences:
            return f"aud {audience!r} is not one of {sorted(audiences)}"
        return check_lifetime(claims)


def check_lifetime(claims):
    """None when `iat` and `exp` are numbers, `iat` is not in the future, `exp` has not passed,
    and the JWT lives at most an hour; otherwise what is wrong."""
    issued, expires = claims.get("iat"), claims.get("exp")
    if not all(isinstance(value, (int, float)) and not isinstance(value, bool) for value in (issued, expires)):
        return "iat and exp must both be numbers"
    now = time.time()
    if issued > now + LEEWAY:
        return "iat is in the future"
    if expires <= now - LEEWAY:
        return "the JWT has expired"
    if expires - issued > MAX_JWT_LIFETIME:
        return f"the JWT lives longer than {MAX_JWT_LIFETIME} s"
    return None


def write_private_json(path, document):
    """Writes `document` to `path` (mode 0600 from the start) through a temporary file and a rename."""
    temporary = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        os.fchmod(handle.fileno(), 0o600)
        json.dump(document, handle, indent=2)
        handle.write("\n")
    os.replace(temporary, path)
