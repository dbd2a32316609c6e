"""Google-style ID tokens for the sandbox: one signing key standing in for Google's, used by the
three places a Google credential gets an ID token (the token endpoint's JWT bearer grant with
`target_audience`, the metadata server's `identity` endpoint, IAM Credentials'
`generateIdToken`), and the check the gRPC test service makes on them.

Tokens are RS256 JWTs like Google's: `iss` https://accounts.google.com, `aud` the audience
asked for, `azp` and `sub` the account's numeric id, `email` and `email_verified` (unless the
caller asked for no email), `iat`, and `exp` an hour later. Verification is google-auth's own
(`google.auth.jwt.decode`): signature, `exp`/`iat` and audience.
"""

import secrets
import time

import google.auth.exceptions
import google.auth.jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from google.auth import crypt

ISSUER = "https://accounts.google.com"
LIFETIME = 3600


class IDTokenSigner:
    """Signs and verifies the sandbox's ID tokens."""

    def __init__(self, lifetime=LIFETIME):
        self.lifetime = lifetime
        self.key_id = "sandbox-google-" + secrets.token_hex(4)
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        private_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                        serialization.NoEncryption())
        self._signer = crypt.RSASigner.from_string(private_pem, key_id=self.key_id)
        #: The public key (PEM), as a relying party would fetch it.
        self.public_pem = key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()

    def issue(self, email, account_id, audience, include_email=True, extra=None):
        """An ID token for the service account `email` (numeric id `account_id`) and `audience`."""
        now = int(time.time())
        claims = {"iss": ISSUER, "aud": audience, "azp": account_id, "sub": account_id,
                  "iat": now, "exp": now + self.lifetime}
        if include_email:
            claims.update(email=email, email_verified=True)
        if extra:
            claims.update(extra)
        return google.auth.jwt.encode(self._signer, claims).decode()

    def is_ours(self, token):
        """Whether `token` names this signer's key (so it is worth verifying as an ID token)."""
        try:
            return google.auth.jwt.decode_header(token).get("kid") == self.key_id
        except (ValueError, TypeError):
            return False

    def verify(self, token, audiences):
        """The claims of `token` when google-auth verifies its signature, times and audience
        (one of `audiences`); None otherwise."""
        try:
            claims = google.auth.jwt.decode(token, certs={self.key_id: self.public_pem}, audience=list(audiences))
        except (ValueError, google.auth.exceptions.GoogleAuthError):
            return None
        if claims.get("iss") != ISSUER:
            return None
        return claims
