"""Google's Security Token Service as workload and workforce identity federation uses it: the
RFC 8693 token exchange that trades a subject token for a Google access token, and the refresh
and revocation of a workforce pool user's refresh token (`external_account_authorized_user`).

    POST /v1/token        grant_type=urn:ietf:params:oauth:grant-type:token-exchange
    POST /v1/oauthtoken   grant_type=refresh_token (HTTP Basic client authentication)
    POST /v1/revoke       token=...&token_type_hint=refresh_token (HTTP Basic)

Pools and providers exist by name: an audience
`//iam.googleapis.com/projects/PROJECT_NUMBER/locations/global/workloadIdentityPools/POOL/providers/PROVIDER`
(PROJECT_NUMBER is this emulator's) or `//iam.googleapis.com/locations/global/workforcePools/POOL/providers/PROVIDER`
names one; a PROVIDER whose name starts with `aws` is an AWS provider, any other an OIDC provider
that trusts the sandbox's OIDC issuer. So a test picks a pool of its own and finds only its
requests under it.

Every field of the exchange is checked (each refusal is an OAuth error, HTTP 400 unless said):

| Check | Error |
| --- | --- |
| `grant_type` is token-exchange; `requested_token_type` is `urn:ietf:params:oauth:token-type:access_token` | `unsupported_grant_type`, `invalid_request` |
| `audience` names a pool provider of this emulator | `invalid_target` |
| `scope` is present, space-separated scope tokens | `invalid_scope` |
| `subject_token_type` is `...:jwt` or `...:id_token` for OIDC, `urn:ietf:params:aws:token-type:aws4_request` for AWS | `invalid_request` |
| OIDC: the JWT verifies (RS256) with a key from the issuer's JWKS, fetched from its discovery document; `iss` is the issuer; `aud` is `https:` + the audience; `exp`, `iat` and `nbf` hold | `invalid_grant` |
| AWS: the subject token is the URL-encoded JSON of a signed `POST https://sts.REGION.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15` with `x-goog-cloud-target-resource` = the audience; it is sent to the AWS emulator, whose botocore check must accept it | `invalid_grant` |
| `options`, when present, is JSON (raw, or percent-encoded as google-auth sends it) with only `userProject`, and only for a workforce pool | `invalid_request` |
| a workforce pool exchange without client authentication names `options.userProject` | `invalid_request` |
| HTTP Basic client authentication, when sent, names a client of this emulator with its secret | `invalid_client` (401) |

The answer: `{"access_token", "issued_token_type", "token_type": "Bearer", "expires_in"}`; the token
is the sandbox issuer's, for the principal
`principal://iam.googleapis.com/projects/N/locations/global/workloadIdentityPools/POOL/subject/SUB`
(or `.../workforcePools/POOL/subject/SUB`), so the gRPC test service names that principal as the
caller. For AWS providers SUB is the role ARN AWS answered with.

Test-only endpoints:

    POST /sandbox/clients            -> {"client_id", "client_secret"}: a client for HTTP Basic authentication
    POST /sandbox/workforce-users    {"quota_project_id"?} -> an external_account_authorized_user document
    POST /sandbox/behaviour          {"audience", "status"?, "expires_in"?}: that audience's exchanges fail
                                     with HTTP status (and `temporarily_unavailable` for 5xx) or issue
                                     tokens living expires_in seconds
    GET  /sandbox/requests?audience=A   every exchange received for A: {"form", "authorization", "subject"}
    GET  /sandbox/stats                 counters
"""

import base64
import hmac
import http.client
import json
import re
import secrets
import threading
import urllib.parse

import jwt

from http_peer import Answer, HTTPPeer

PROJECT_NUMBER = "123456789012"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
JWT_TYPES = ("urn:ietf:params:oauth:token-type:jwt", "urn:ietf:params:oauth:token-type:id_token")
AWS_TYPE = "urn:ietf:params:aws:token-type:aws4_request"
WORKLOAD = re.compile(
    r"//iam\.googleapis\.com/projects/(?P<project>[0-9]+)/locations/global/workloadIdentityPools/"
    r"(?P<pool>[a-z0-9-]{4,32})/providers/(?P<provider>[a-z0-9-]{4,32})\Z")
WORKFORCE = re.compile(
    r"//iam\.googleapis\.com/locations/global/workforcePools/(?P<pool>[a-z0-9-]{4,63})/providers/"
    r"(?P<provider>[a-z0-9-]{4,32})\Z")
AWS_URL = re.compile(r"https://sts\.(?P<region>[a-z0-9-]+)\.amazonaws\.com/?\?Action=GetCallerIdentity&Version=2011-06-15\Z")
SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5B\x5D-\x7E]+\Z")
DEFAULT_LIFETIME = 3600


class OAuthRefusal(Exception):
    def __init__(self, error, description, status=400):
        super().__init__(description)
        self.error, self.description, self.status = error, description, status


class SecurityTokenService(HTTPPeer):
    """`oidc` is the OIDC provider whose tokens OIDC providers trust, `aws` the AWS emulator,
    `mint(principal, scope, lifetime)` the issuer's token minting."""

    def __init__(self, host, port, oidc, aws, mint):
        super().__init__("sts", host, port)
        self.oidc = oidc
        self.aws = aws
        self.mint = mint
        self._lock = threading.Lock()
        self._jwks = None
        self._clients = {}          # client id -> secret
        self._refresh_tokens = {}   # refresh token -> {"client_id", "principal", "audience", "revoked"}
        self._behaviour = {}        # audience -> {"status", "expires_in"}
        self._requests = {}         # audience -> [record]
        self._stats = {"exchanges": 0, "refused": 0, "refreshes": 0, "revocations": 0}
        self.route("POST", "/v1/token", self._exchange_endpoint)
        self.route("POST", "/v1/oauthtoken", self._refresh_endpoint)
        self.route("POST", "/v1/revoke", self._revoke_endpoint)
        self.route("POST", "/sandbox/clients", self._new_client)
        self.route("POST", "/sandbox/workforce-users", self._new_workforce_user)
        self.route("POST", "/sandbox/behaviour", self._set_behaviour)
        self.route("GET", "/sandbox/requests", self._recorded)
        self.route("GET", "/sandbox/stats", lambda request: Answer.json(200, self._counters()))

    @property
    def token_url(self):
        return f"{self.url}/v1/token"

    def workload_audience(self, pool, provider):
        return f"//iam.googleapis.com/projects/{PROJECT_NUMBER}/locations/global/workloadIdentityPools/{pool}/providers/{provider}"

    def _count(self, name):
        with self._lock:
            self._stats[name] += 1

    def _counters(self):
        with self._lock:
            return dict(self._stats)

    # -- the exchange ---------------------------------------------------------------------------

    def _exchange_endpoint(self, request):
        self._count("exchanges")
        form = {name: values[-1] for name, values in request.form().items()}
        audience = form.get("audience", "")
        self._record(audience, form, request)
        try:
            if (request.header("Content-Type") or "").split(";")[0].strip() != "application/x-www-form-urlencoded":
                raise OAuthRefusal("invalid_request", "the body must be application/x-www-form-urlencoded")
            client = self._client(request)
            with self._lock:
                behaviour = dict(self._behaviour.get(audience, {}))
            if behaviour.get("status"):
                status = behaviour["status"]
                raise OAuthRefusal("temporarily_unavailable" if status >= 500 else "invalid_grant",
                                   "the sandbox was told to fail this exchange", status)
            principal, scope = self._exchange(form, client)
        except OAuthRefusal as refusal:
            self._count("refused")
            self.log.info("refused an exchange for %s: %s %s", audience, refusal.error, refusal.description)
            return Answer.json(refusal.status, {"error": refusal.error, "error_description": refusal.description})
        lifetime = behaviour.get("expires_in") or DEFAULT_LIFETIME
        minted = self.mint(principal, scope, lifetime)
        return Answer.json(200, {"access_token": minted["access_token"], "issued_token_type": ACCESS_TOKEN_TYPE,
                                 "token_type": "Bearer", "expires_in": lifetime})

    def _exchange(self, form, client):
        if form.get("grant_type") != TOKEN_EXCHANGE:
            raise OAuthRefusal("unsupported_grant_type", f"grant_type must be {TOKEN_EXCHANGE}")
        if form.get("requested_token_type") != ACCESS_TOKEN_TYPE:
            raise OAuthRefusal("invalid_request", f"requested_token_type must be {ACCESS_TOKEN_TYPE}")
        audience = form.get("audience", "")
        workload, workforce = WORKLOAD.match(audience), WORKFORCE.match(audience)
        if workload is None and workforce is None:
            raise OAuthRefusal("invalid_target", "the audience is not a workload or workforce pool provider")
        if workload is not None and workload["project"] != PROJECT_NUMBER:
            raise OAuthRefusal("invalid_target", "the audience's project is not this emulator's")
        scope = form.get("scope", "")
        if not scope or not all(SCOPE_TOKEN.match(token) for token in scope.split(" ")):
            raise OAuthRefusal("invalid_scope", "scope must be space-separated scope tokens")
        options = self._options(form.get("options"))
        if options and workforce is None:
            raise OAuthRefusal("invalid_request", "options.userProject is only for workforce pools")
        if workforce is not None and client is None and not options.get("userProject"):
            raise OAuthRefusal("invalid_request", "a workforce pool exchange without a client needs options.userProject")
        match = workload or workforce
        subject_type, subject_token = form.get("subject_token_type", ""), form.get("subject_token", "")
        if not subject_token:
            raise OAuthRefusal("invalid_request", "subject_token is missing")
        if match["provider"].startswith("aws"):
            if subject_type != AWS_TYPE:
                raise OAuthRefusal("invalid_request", f"an AWS provider takes subject_token_type {AWS_TYPE}")
            subject = self._verify_aws(subject_token, audience)
        else:
            if subject_type not in JWT_TYPES:
                raise OAuthRefusal("invalid_request", f"an OIDC provider takes subject_token_type {' or '.join(JWT_TYPES)}")
            subject = self._verify_oidc(subject_token, "https:" + audience)
        if workload is not None:
            pool = f"projects/{PROJECT_NUMBER}/locations/global/workloadIdentityPools/{match['pool']}"
        else:
            pool = f"locations/global/workforcePools/{match['pool']}"
        return f"principal://iam.googleapis.com/{pool}/subject/{subject}", scope

    @staticmethod
    def _options(text):
        if text is None:
            return {}
        if text.startswith("%7B") or text.startswith("%7b"):
            text = urllib.parse.unquote(text)  # google-auth percent-encodes the JSON once more
        try:
            options = json.loads(text)
        except ValueError:
            raise OAuthRefusal("invalid_request", "options is not JSON") from None
        if not isinstance(options, dict) or set(options) - {"userProject"} or not all(isinstance(v, str) for v in options.values()):
            raise OAuthRefusal("invalid_request", "options may hold userProject (a string) only")
        return options

    def _jwk_client(self):
        with self._lock:
            if self._jwks is None:
                # The issuer's keys, from its discovery document, as Google's STS finds them.
                connection = http.client.HTTPConnection(self.oidc.host, self.oidc.port, timeout=10)
                connection.request("GET", "/.well-known/openid-configuration")
                discovery = json.loads(connection.getresponse().read())
                connection.close()
                self._jwks = jwt.PyJWKClient(discovery["jwks_uri"], cache_keys=True)
            return self._jwks

    def _verify_oidc(self, token, expected_audience):
        try:
            key = self._jwk_client().get_signing_key_from_jwt(token)
            claims = jwt.decode(token, key.key, algorithms=["RS256"], audience=expected_audience,
                                issuer=self.oidc.issuer, options={"require": ["exp", "iat", "iss", "aud", "sub"]},
                                leeway=30)
        except jwt.PyJWTError as error:
            raise OAuthRefusal("invalid_grant", f"the subject token does not verify: {error}") from None
        return claims["sub"]

    def _verify_aws(self, token, audience):
        try:
            request = json.loads(urllib.parse.unquote(token))
            url, method = request["url"], request["method"]
            headers = {entry["key"]: entry["value"] for entry in request["headers"]}
        except (ValueError, KeyError, TypeError):
            raise OAuthRefusal("invalid_grant", "the subject token is not a serialised AWS request") from None
        if AWS_URL.match(url) is None or method != "POST":
            raise OAuthRefusal("invalid_grant", "the AWS request is not POST sts.REGION.amazonaws.com GetCallerIdentity")
        lowered = {name.lower(): value for name, value in headers.items()}
        if lowered.get("x-goog-cloud-target-resource") != audience:
            raise OAuthRefusal("invalid_grant", "x-goog-cloud-target-resource is not the audience")
        # Forward the signed request to AWS (the emulator), as Google's STS does.
        query = urllib.parse.urlsplit(url).query
        connection = http.client.HTTPConnection(self.aws.host, self.aws.port, timeout=10)
        forwarded = {name: value for name, value in headers.items() if name.lower() != "x-goog-cloud-target-resource"}
        connection.request("POST", f"/?{query}", body=b"", headers=forwarded)
        response = connection.getresponse()
        body = response.read().decode("utf-8", "replace")
        connection.close()
        if response.status != 200:
            message = re.search(r"<Message>(.*?)</Message>", body)
            raise OAuthRefusal("invalid_grant", f"AWS refused the signed request: {message.group(1) if message else response.status}")
        arn = re.search(r"<Arn>(.*?)</Arn>", body)
        return arn.group(1) if arn else "unknown"

    def _client(self, request):
        """The client HTTP Basic authentication names, checked; None without one."""
        authorization = request.header("Authorization")
        if authorization is None:
            return None
        scheme, _, value = authorization.partition(" ")
        try:
            client_id, _, secret = base64.b64decode(value, validate=True).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            raise OAuthRefusal("invalid_client", "the Authorization header is not HTTP Basic", 401) from None
        client_id, secret = urllib.parse.unquote(client_id), urllib.parse.unquote(secret)
        with self._lock:
            known = self._clients.get(client_id)
        if scheme.lower() != "basic" or known is None or not hmac.compare_digest(known.encode(), secret.encode()):
            raise OAuthRefusal("invalid_client", "the client is unknown or its secret is wrong", 401)
        return client_id

    def _record(self, audience, form, request):
        record = {"form": form, "authorization": request.header("Authorization"),
                  "content_type": request.header("Content-Type"), "subject": self._decoded(form)}
        with self._lock:
            self._requests.setdefault(audience, []).append(record)

    @staticmethod
    def _decoded(form):
        """The subject token as a test compares it: a JWT's header and claims, an AWS request's JSON."""
        token = form.get("subject_token", "")
        if form.get("subject_token_type") == AWS_TYPE:
            try:
                return json.loads(urllib.parse.unquote(token))
            except ValueError:
                return None
        try:
            return {"header": jwt.get_unverified_header(token),
                    "claims": jwt.decode(token, options={"verify_signature": False})}
        except jwt.PyJWTError:
            return None

    def _recorded(self, request):
        with self._lock:
            return Answer.json(200, {"requests": list(self._requests.get(request.query.get("audience", ""), []))})

    # -- workforce users (external_account_authorized_user) --------------------------------------

    def _new_client(self, request):
        client_id = "sts-client-" + secrets.token_hex(6)
        secret = secrets.token_urlsafe(24)
        with self._lock:
            self._clients[client_id] = secret
        return Answer.json(200, {"client_id": client_id, "client_secret": secret})

    def _new_workforce_user(self, request):
        body = request.json() or {}
        client = json.loads(self._new_client(request).body)
        pool = "sandbox-workforce-" + secrets.token_hex(4)
        audience = f"//iam.googleapis.com/locations/global/workforcePools/{pool}/providers/sandbox-oidc"
        refresh_token = secrets.token_urlsafe(48)
        principal = f"principal://iam.googleapis.com/locations/global/workforcePools/{pool}/subject/workforce-user@example.com"
        with self._lock:
            self._refresh_tokens[refresh_token] = {"client_id": client["client_id"], "principal": principal,
                                                   "audience": audience, "revoked": False}
        document = {
            "type": "external_account_authorized_user", "audience": audience,
            "refresh_token": refresh_token, "token_url": f"{self.url}/v1/oauthtoken",
            "token_info_url": f"{self.url}/v1/introspect", "revoke_url": f"{self.url}/v1/revoke",
            "client_id": client["client_id"], "client_secret": client["client_secret"],
            "universe_domain": "googleapis.com",
        }
        if body.get("quota_project_id"):
            document["quota_project_id"] = body["quota_project_id"]
        return Answer.json(200, document)

    def _refresh_endpoint(self, request):
        self._count("refreshes")
        form = {name: values[-1] for name, values in request.form().items()}
        try:
            client = self._client(request)
            if client is None:
                raise OAuthRefusal("invalid_client", "HTTP Basic client authentication is required", 401)
            if form.get("grant_type") != "refresh_token":
                raise OAuthRefusal("unsupported_grant_type", "grant_type must be refresh_token")
            with self._lock:
                grant = self._refresh_tokens.get(form.get("refresh_token", ""))
                grant = dict(grant) if grant else None
            if grant is None or grant["revoked"] or grant["client_id"] != client:
                raise OAuthRefusal("invalid_grant", "the refresh token is unknown, revoked or another client's")
        except OAuthRefusal as refusal:
            return Answer.json(refusal.status, {"error": refusal.error, "error_description": refusal.description})
        minted = self.mint(grant["principal"], "https://www.googleapis.com/auth/cloud-platform", DEFAULT_LIFETIME)
        return Answer.json(200, {"access_token": minted["access_token"], "token_type": "Bearer",
                                 "expires_in": DEFAULT_LIFETIME, "issued_token_type": ACCESS_TOKEN_TYPE})

    def _revoke_endpoint(self, request):
        self._count("revocations")
        form = {name: values[-1] for name, values in request.form().items()}
        try:
            client = self._client(request)
            if client is None:
                raise OAuthRefusal("invalid_client", "HTTP Basic client authentication is required", 401)
        except OAuthRefusal as refusal:
            return Answer.json(refusal.status, {"error": refusal.error, "error_description": refusal.description})
        with self._lock:
            grant = self._refresh_tokens.get(form.get("token", ""))
            if grant is not None and grant["client_id"] == client:
                grant["revoked"] = True
        return Answer(200, b"", "application/json")

    def _set_behaviour(self, request):
        body = request.json() or {}
        audience = body.get("audience")
        if not isinstance(audience, str):
            return Answer.json(400, {"error": "audience is required"})
        with self._lock:
            self._behaviour[audience] = {"status": int(body.get("status") or 0),
                                         "expires_in": int(body.get("expires_in") or 0)}
        return Answer.json(200, self._behaviour[audience])
