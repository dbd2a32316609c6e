"""An OpenID Connect identity provider that issues subject tokens, and the two URL sources that
hand them out in production: GitHub Actions' OIDC token endpoint and Azure's instance metadata
service. Its signing key (RSA-2048, RS256) is generated at every start and published at its JWKS
URL, which the Security Token Service emulator fetches to verify every subject token.

    GET  /.well-known/openid-configuration     {"issuer", "jwks_uri", ...}
    GET  /.well-known/jwks                     the public key
    GET  /_apis/actions/idtoken?api-version=2.0&audience=AUD
         Authorization: Bearer <actions_request_token>
                                               {"count": 1, "value": JWT}     (GitHub Actions)
    GET  /metadata/identity/oauth2/token?api-version=2018-02-01&resource=AUD
         Metadata: true                        {"access_token": JWT, ...}     (Azure IMDS)

A token's claims: `iss` (this provider), `sub`, `aud`, `iat`, `nbf`, `exp` (10 minutes), `jti`,
and GitHub's `repository`, `ref`, `actor`, `workflow`. Test-only endpoints, under /sandbox/:

    POST /sandbox/mint       {"sub", "audience", "lifetime"?, "expired"?} -> {"token"}
    POST /sandbox/behaviour  {"source": "github"|"azure", "mode": "normal"|"redirect"|"trickle"|
                              "huge"|"status", "status"?}: how that URL source answers from now on
    GET  /sandbox/stats      {"github_requests", "azure_requests", "refused"}
"""

import json
import secrets
import threading
import time

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

from http_peer import Answer, HTTPPeer

DEFAULT_LIFETIME = 600
GITHUB_PATH = "/_apis/actions/idtoken"
AZURE_PATH = "/metadata/identity/oauth2/token"


class OIDCProvider(HTTPPeer):
    def __init__(self, host, port):
        super().__init__("oidc", host, port)
        self._key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.key_id = secrets.token_hex(8)
        #: The bearer token GitHub puts in ACTIONS_ID_TOKEN_REQUEST_TOKEN.
        self.actions_request_token = secrets.token_urlsafe(24)
        self._lock = threading.Lock()
        self._stats = {"github_requests": 0, "azure_requests": 0, "refused": 0}
        self._behaviour = {"github": {"mode": "normal"}, "azure": {"mode": "normal"}}
        self.route("GET", "/.well-known/openid-configuration", self._discovery)
        self.route("GET", "/.well-known/jwks", self._jwks)
        self.route("GET", GITHUB_PATH, self._github)
        self.route("GET", AZURE_PATH, self._azure)
        self.route("POST", "/sandbox/mint", self._mint_endpoint)
        self.route("POST", "/sandbox/behaviour", self._set_behaviour)
        self.route("GET", "/sandbox/stats", lambda request: Answer.json(200, self._counters()))

    @property
    def issuer(self):
        return self.url

    @property
    def github_token_url(self):
        """What GitHub sets ACTIONS_ID_TOKEN_REQUEST_URL to (google-github-actions/auth adds &audience=)."""
        return f"{self.url}{GITHUB_PATH}?api-version=2.0"

    def public_jwk(self):
        document = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self._key.public_key()))
        document.update(kid=self.key_id, alg="RS256", use="sig")
        return document

    def mint(self, subject, audience, lifetime=DEFAULT_LIFETIME, expired=False):
        now = int(time.time())
        issued = now - 2 * lifetime if expired else now
        claims = {
            "iss": self.issuer, "sub": subject, "aud": audience, "iat": issued, "nbf": issued - 5,
            "exp": issued + lifetime, "jti": secrets.token_hex(8),
            "repository": "octo-org/octo-repo", "ref": "refs/heads/main", "actor": "octocat",
            "workflow": "ci",
        }
        return jwt.encode(claims, self._key, algorithm="RS256", headers={"kid": self.key_id})

    def _count(self, name):
        with self._lock:
            self._stats[name] += 1

    def _counters(self):
        with self._lock:
            return dict(self._stats)

    # -- routes ---------------------------------------------------------------------------------

    def _discovery(self, request):
        return Answer.json(200, {
            "issuer": self.issuer, "jwks_uri": f"{self.url}/.well-known/jwks",
            "subject_types_supported": ["public", "pairwise"], "response_types_supported": ["id_token"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "claims_supported": ["sub", "aud", "exp", "iat", "iss", "jti", "nbf", "ref", "repository", "actor"],
        })

    def _jwks(self, request):
        return Answer.json(200, {"keys": [self.public_jwk()]})

    def _hostile(self, source, good):
        """The answer `good` would be, changed as /sandbox/behaviour says for `source`."""
        with self._lock:
            behaviour = dict(self._behaviour[source])
        mode = behaviour.get("mode", "normal")
        if mode == "redirect":
            return Answer.json(302, {"moved": True}, headers={"Location": "http://127.0.0.1:9/elsewhere"})
        if mode == "trickle":
            return Answer(200, good.body + b" " * 4096, good.content_type, trickle=0.5)
        if mode == "huge":
            return Answer(200, b"{\"value\": \"" + b"A" * (10 * 1024 * 1024) + b"\"}", "application/json")
        if mode == "status":
            return Answer.json(behaviour.get("status", 500), {"message": "the sandbox was told to fail"})
        return good

    def _github(self, request):
        self._count("github_requests")
        authorization = request.header("Authorization") or ""
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not secrets.compare_digest(token.encode(), self.actions_request_token.encode()):
            self._count("refused")
            return Answer.json(401, {"message": "Bad credentials"})
        audience = request.query.get("audience")
        if not audience:
            self._count("refused")
            return Answer.json(400, {"message": "audience is required"})
        subject = "repo:octo-org/octo-repo:ref:refs/heads/main"
        return self._hostile("github", Answer.json(200, {"count": 1, "value": self.mint(subject, audience)}))

    def _azure(self, request):
        self._count("azure_requests")
        if (request.header("Metadata") or "").lower() != "true":
            self._count("refused")
            return Answer.json(400, {"error": "invalid_request", "error_description": "Required metadata header not specified"})
        resource = request.query.get("resource")
        if not resource:
            return Answer.json(400, {"error": "invalid_request", "error_description": "resource is required"})
        token = self.mint("azure-managed-identity-object-id", resource)
        return self._hostile("azure", Answer.json(200, {
            "access_token": token, "expires_in": str(DEFAULT_LIFETIME), "token_type": "Bearer",
            "resource": resource, "client_id": "azure-client-id",
        }))

    def _mint_endpoint(self, request):
        body = request.json() or {}
        subject, audience = body.get("sub"), body.get("audience")
        if not isinstance(subject, str) or not isinstance(audience, str) or not subject or not audience:
            return Answer.json(400, {"error": "sub and audience are required strings"})
        lifetime = body.get("lifetime", DEFAULT_LIFETIME)
        if not isinstance(lifetime, int) or not 1 <= lifetime <= 86400:
            return Answer.json(400, {"error": "lifetime must be 1...86400 seconds"})
        return Answer.json(200, {"token": self.mint(subject, audience, lifetime, bool(body.get("expired")))})

    def _set_behaviour(self, request):
        body = request.json() or {}
        source, mode = body.get("source"), body.get("mode", "normal")
        if source not in self._behaviour or mode not in ("normal", "redirect", "trickle", "huge", "status"):
            return Answer.json(400, {"error": "source is github or azure; mode normal, redirect, trickle, huge or status"})
        with self._lock:
            self._behaviour[source] = {"mode": mode, "status": int(body.get("status", 500))}
        return Answer.json(200, {"source": source, "mode": mode})
