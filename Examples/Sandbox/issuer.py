"""The sandbox's OAuth 2.0 / OpenID Connect issuer, on Authlib (Flask integration), in memory.

Grants: authorization code with PKCE (loopback redirects, automatic consent for the sandbox
user), device authorization (RFC 8628), refresh tokens with rotation, client credentials, and
Google's service-account grant: the JWT bearer grant (RFC 7523) with assertions signed by a
service account's key (service_accounts.py).
Endpoints: discovery (OIDC and RFC 8414), token, device authorization and verification page,
revocation (RFC 7009), introspection (RFC 7662), userinfo, JWKS. Test-only endpoints live under
/sandbox/ (see README.md). Token values are never logged.
"""

import hashlib
import json
import logging
import os
import secrets
import threading
import time
import urllib.parse

os.environ.setdefault("AUTHLIB_INSECURE_TRANSPORT", "1")  # plain http, on loopback only

from authlib.integrations.flask_oauth2 import AuthorizationServer  # noqa: E402
from authlib.oauth2 import OAuth2Error  # noqa: E402
from authlib.oauth2.rfc6749 import ClientMixin, InvalidGrantError, InvalidScopeError, TokenMixin, grants  # noqa: E402
from authlib.oauth2.rfc7009 import RevocationEndpoint  # noqa: E402
from authlib.oauth2.rfc7523 import JWTBearerGrant  # noqa: E402
from authlib.oauth2.rfc7636 import CodeChallenge  # noqa: E402
from authlib.oauth2.rfc7662 import IntrospectionEndpoint  # noqa: E402
from authlib.oauth2.rfc8628 import DeviceAuthorizationEndpoint, DeviceCodeGrant, DeviceCredentialDict  # noqa: E402
from flask import Flask, jsonify, redirect, request  # noqa: E402
from joserfc import jwt  # noqa: E402
from joserfc.jwk import RSAKey  # noqa: E402
from werkzeug.serving import make_server  # noqa: E402

import service_accounts  # noqa: E402

log = logging.getLogger("sandbox.issuer")

DEVICE_CODE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
USER_GRANTS = ["authorization_code", "refresh_token", DEVICE_CODE_GRANT]
ALL_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"]
LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}
# --hostile-text: what a terminal would act on (CSI clear-screen and colour, an OSC window title,
# a C1 CSI, bidi override and isolates, a line separator, DEL, backspace, tab) and a forged line.
HOSTILE_TEXT = ("\x1b[2J\x1b[31m\x1b]0;title\x07\u009b31m\u202eevil\u202c\u2066\u2069\u2028\x7f\x08\tend"
                "\r\nauth_sample: error: FORGED LINE\n\x00")



class Client(ClientMixin):
    def __init__(self, client_id, secret=None, grant_types=None, token_lifetime=None,
                 auth_methods=None, device_interval=None, rotates_refresh_tokens=True):
        self.client_id = client_id
        # Google's own clients (gcloud's ADC among them) keep one refresh token for good.
        self.rotates_refresh_tokens = rotates_refresh_tokens
        self.secret = secret
        self.grant_types = grant_types or USER_GRANTS
        self.token_lifetime = token_lifetime
        self.auth_methods = auth_methods or (["client_secret_basic", "client_secret_post"] if secret else ["none"])
        self.device_interval = device_interval

    def get_client_id(self):
        return self.client_id

    def get_default_redirect_uri(self):
        return None

    def get_allowed_scope(self, scope):
        return scope or ""

    def check_redirect_uri(self, redirect_uri):
        # RFC 8252 section 7.3: any port on a loopback interface, any path.
        parts = urllib.parse.urlsplit(redirect_uri or "")
        return parts.scheme == "http" and parts.hostname is not None and (
            parts.hostname in LOOPBACK_HOSTS or parts.netloc.split("]")[0] + "]" in LOOPBACK_HOSTS)

    def check_client_secret(self, client_secret):
        return self.secret is not None and secrets.compare_digest(self.secret, client_secret or "")

    def check_endpoint_auth_method(self, method, endpoint):
        if endpoint == "token":
            return method in self.auth_methods
        return method in self.auth_methods or method == "none"

    def check_response_type(self, response_type):
        return response_type == "code" and "authorization_code" in self.grant_types

    def check_grant_type(self, grant_type):
        return grant_type in self.grant_types


class Token(TokenMixin):
    def __init__(self, values, client, user, family):
        self.access_token = values["access_token"]
        self.refresh_token = values.get("refresh_token")
        self.scope = values.get("scope", "")
        self.expires_in = values.get("expires_in", 0)
        self.issued_at = time.time()
        self.client = client
        self.user = user
        self.family = family
        self.access_revoked = False
        self.refresh_revoked = False

    def check_client(self, client):
        return client.get_client_id() == self.client.client_id

    def get_scope(self):
        return self.scope

    def get_expires_in(self):
        return self.expires_in

    def is_expired(self):
        return time.time() >= self.issued_at + self.expires_in

    def is_revoked(self):
        return self.access_revoked

    def get_user(self):
        return self.user

    def get_client(self):
        return self.client


class AuthorizationCode:
    def __init__(self, code, client_id, redirect_uri, scope, user, code_challenge, code_challenge_method):
        self.code = code
        self.client_id = client_id
        self.redirect_uri = redirect_uri
        self.scope = scope
        self.user = user
        self.code_challenge = code_challenge
        self.code_challenge_method = code_challenge_method
        self.created = time.time()

    def get_redirect_uri(self):
        return self.redirect_uri

    def get_scope(self):
        return self.scope

    def is_expired(self):
        return time.time() > self.created + 120


class Store:
    """Everything the issuer knows, behind one lock."""

    def __init__(self):
        self.lock = threading.RLock()
        self.clients = {}
        self.tokens_by_access = {}
        self.tokens_by_refresh = {}
        self.codes = {}
        self.devices = {}           # device_code -> DeviceCredentialDict
        self.device_grants = {}     # user_code -> approved (bool)
        self.stats = {}
        self.token_behaviour = {}   # client_id -> {"delay_ms": int, "status": int, "hold": bool} (test knob)
        self.token_holds = {}       # client_id -> threading.Event its held token requests wait on
        self.tenants = {}           # tenant id -> discovery endpoints overriding the defaults (test knob)

    def count(self, client_id, name):
        with self.lock:
            counters = self.stats.setdefault(client_id or "-", {})
            counters[name] = counters.get(name, 0) + 1


class Issuer:
    def __init__(self, host, port, token_lifetime, auto_approve_after, state_dir, user_email, user_sub,
                 device_interval=1, hostile_text=False, service_accounts_registry=None, public_name=None,
                 ssl_context=None):
        self.host = host
        # The name in the issuer's URL when it is not the listening address (the tests resolve it
        # through a private hosts file), and TLS when an ssl.SSLContext is given.
        self.public_name = public_name
        self.ssl_context = ssl_context
        self.port = port
        self.token_lifetime = token_lifetime
        self.auto_approve_after = auto_approve_after
        self.state_dir = state_dir
        self.user = {"sub": user_sub, "email": user_email}
        self.device_interval = device_interval
        self.hostile_text = hostile_text  # user codes, URIs, error descriptions and ID-token emails carry HOSTILE_TEXT
        self.store = Store()
        self.signing_key = RSAKey.generate_key(2048, parameters={"kid": "sandbox-1", "use": "sig", "alg": "RS256"})
        self.service_accounts = service_accounts_registry or service_accounts.ServiceAccounts()
        self._seen_jwt_access = set()  # sha256 of every self-signed JWT accepted (guarded by store.lock)
        #: The Google-style ID-token signer (id_tokens.IDTokenSigner) for assertions with a
        #: `target_audience`; None refuses them.
        self.id_tokens = None
        self.url = None
        self._server = None
        self._thread = None
        self._app = None
        self._lifecycle = threading.Lock()
        self._stopped = False
        for client in (
            Client("sandbox-cli"),
            Client("sandbox-confidential", secret="sandbox-secret"),
            Client("sandbox-service", secret="sandbox-service-secret", grant_types=["client_credentials"]),
        ):
            self.store.clients[client.client_id] = client

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self):
        self._app = self._make_app()
        self._server = make_server(self.host, self.port, self._app, threaded=True, ssl_context=self.ssl_context)
        self.port = self._server.server_port
        host = self.public_name or (f"[{self.host}]" if ":" in self.host else self.host)
        self.url = f"{'https' if self.ssl_context else 'http'}://{host}:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="issuer", daemon=True)
        self._thread.start()
        return self.port

    def stop(self):
        with self._lifecycle:
            self._stopped = True
            server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def outage(self, seconds, while_exists=None):
        """Stops listening for `seconds` (connections are refused), then listens again on the same
        port with everything it knew: an issuer that went down and came back. With `while_exists`
        (a path), it comes back as soon as that file is gone, `seconds` being the bound: a test
        ends the outage when it is done, however slowly its steps ran."""
        def run():
            with self._lifecycle:
                server, self._server = self._server, None
            if server is None:
                return
            server.shutdown()
            server.server_close()
            log.info("outage: not listening for %.1f s at most", seconds)
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                if while_exists is not None and not os.path.exists(while_exists):
                    break
                time.sleep(0.05)
            with self._lifecycle:
                if self._stopped:
                    return
                self._server = make_server(self.host, self.port, self._app, threaded=True,
                                           ssl_context=self.ssl_context)
                threading.Thread(target=self._server.serve_forever, name="issuer", daemon=True).start()
            log.info("outage over: listening again")

        threading.Thread(target=run, name="issuer-outage", daemon=True).start()

    # -- what the gRPC test service asks ----------------------------------------------------------

    def validate_access_token(self, access_token):
        with self.store.lock:
            token = self.store.tokens_by_access.get(access_token)
            if token is None or token.is_revoked() or token.is_expired():
                return None
            user = token.user or {}
            return {"user": user.get("email", token.client.client_id), "sub": user.get("sub", ""),
                    "scope": token.scope, "client_id": token.client.client_id}

    # -- Google credentials ---------------------------------------------------------------------

    def verify_jwt_access(self, token, audiences):
        """A service account's self-signed JWT, checked (ServiceAccounts.verify_jwt_access); each
        distinct JWT accepted is counted under the account: `jwt_access_tokens`, and
        `jwt_access_tokens <aud>` (or `jwt_access_tokens scope` without an audience)."""
        identity = self.service_accounts.verify_jwt_access(token, audiences)
        if identity is None:
            return None
        fingerprint = hashlib.sha256(token.encode()).hexdigest()
        with self.store.lock:
            first_sight = fingerprint not in self._seen_jwt_access
            self._seen_jwt_access.add(fingerprint)
        if first_sight:
            account = identity["client_id"]
            self.store.count(account, "jwt_access_tokens")
            self.store.count(account, f"jwt_access_tokens {identity.get('audience') or 'scope'}")
        return identity

    def add_service_account(self, name=None, token_lifetime=None):
        """A new service account whose assertions the JWT bearer grant accepts; returns it."""
        account = self.service_accounts.create(name)
        client = Client(account.email, grant_types=[JWT_BEARER_GRANT], auth_methods=["none"],
                        token_lifetime=token_lifetime)
        with self.store.lock:
            self.store.clients[account.email] = client
        return account

    def service_account_key(self, account):
        """The account's key file, in Google's format, with this issuer as its token endpoint."""
        return account.key_document(token_uri=f"{self.url}/token", auth_uri=f"{self.url}/authorize",
                                    certs_url=self.url)

    def authorized_user(self, quota_project_id=None, token_lifetime=None):
        """gcloud's application_default_credentials.json for the sandbox user: a confidential
        client of its own (refresh tokens not rotated, as at Google) and a refresh token for the
        test scope. Like gcloud's, the file names no token endpoint: clients send user
        credentials to Google's unless told otherwise (google-auth ignores a `token_uri` there)."""
        client = Client("gcloud-" + secrets.token_hex(6), secret=secrets.token_urlsafe(24),
                        grant_types=["refresh_token"], token_lifetime=token_lifetime,
                        rotates_refresh_tokens=False)
        values = self._generate_token("authorization_code", client, user=self.user,
                                      scope="openid email https://www.googleapis.com/auth/xapi.zoo")
        token = Token(values, client, self.user, secrets.token_hex(8))
        with self.store.lock:
            self.store.clients[client.client_id] = client
            self.store.tokens_by_access[token.access_token] = token
            self.store.tokens_by_refresh[token.refresh_token] = token
        document = {
            "account": "",
            "client_id": client.client_id,
            "client_secret": client.secret,
            "refresh_token": token.refresh_token,
            "type": "authorized_user",
            "universe_domain": "googleapis.com",
        }
        if quota_project_id:
            document["quota_project_id"] = quota_project_id
        return document

    def mint_access_token(self, client_id, scope, lifetime=None):
        """An access token for `client_id` acting for itself (the metadata server's tokens)."""
        with self.store.lock:
            client = self.store.clients.get(client_id)
            if client is None:
                client = Client(client_id, grant_types=[], token_lifetime=lifetime)
                self.store.clients[client_id] = client
        values = self._generate_token("metadata", client, scope=scope, expires_in=lifetime, include_refresh_token=False)
        token = Token(values, client, None, secrets.token_hex(8))
        with self.store.lock:
            self.store.tokens_by_access[token.access_token] = token
        self.store.count(client_id, "token_requests")
        return values

    # -- tokens -------------------------------------------------------------------------------

    def _lifetime(self, client):
        return client.token_lifetime if client.token_lifetime is not None else self.token_lifetime

    def _generate_token(self, grant_type, client, user=None, scope=None, expires_in=None, include_refresh_token=True):
        lifetime = expires_in or self._lifetime(client)
        token = {
            "token_type": "Bearer",
            "access_token": secrets.token_urlsafe(32),
            "expires_in": lifetime,
            "scope": scope or "",
        }
        if include_refresh_token and user is not None:
            token["refresh_token"] = secrets.token_urlsafe(48)
        if user is not None and "openid" in (scope or "").split():
            now = int(time.time())
            claims = {
                "iss": self.url, "sub": user["sub"], "aud": client.client_id, "iat": now, "exp": now + lifetime,
                "auth_time": now, "email": user["email"] + (HOSTILE_TEXT if self.hostile_text else ""), "email_verified": True,
            }
            token["id_token"] = jwt.encode({"alg": "RS256", "kid": "sandbox-1"}, claims, self.signing_key)
        return token

    def _save_token(self, values, oauth_request):
        client = oauth_request.client
        user = oauth_request.user
        previous = getattr(oauth_request, "refresh_token", None)
        family = previous.family if isinstance(previous, Token) else secrets.token_hex(8)
        token = Token(values, client, user, family)
        with self.store.lock:
            self.store.tokens_by_access[token.access_token] = token
            if token.refresh_token:
                self.store.tokens_by_refresh[token.refresh_token] = token
        log.info("issued a token to %s (%s, %ss)", client.client_id, oauth_request.payload.grant_type, token.expires_in)

    # -- the Flask application --------------------------------------------------------------------

    def _make_app(self):
        app = Flask("sandbox-issuer")
        issuer = self
        store = self.store
        server = AuthorizationServer(app, query_client=lambda cid: store.clients.get(cid), save_token=self._save_token)
        server.register_token_generator("default", self._generate_token)

        class AuthorizationCodeGrant(grants.AuthorizationCodeGrant):
            TOKEN_ENDPOINT_AUTH_METHODS = ALL_AUTH_METHODS

            def save_authorization_code(self, code, oauth_request):
                data = oauth_request.payload.data
                item = AuthorizationCode(
                    code, oauth_request.client.client_id, oauth_request.payload.redirect_uri,
                    oauth_request.payload.scope, oauth_request.user,
                    data.get("code_challenge"), data.get("code_challenge_method"))
                with store.lock:
                    store.codes[code] = item

            def query_authorization_code(self, code, client):
                with store.lock:
                    item = store.codes.get(code)
                if item and item.client_id == client.client_id and not item.is_expired():
                    return item
                return None

            def delete_authorization_code(self, authorization_code):
                with store.lock:
                    store.codes.pop(authorization_code.code, None)

            def authenticate_user(self, authorization_code):
                return authorization_code.user

        class RefreshTokenGrant(grants.RefreshTokenGrant):
            TOKEN_ENDPOINT_AUTH_METHODS = ALL_AUTH_METHODS
            INCLUDE_NEW_REFRESH_TOKEN = True  # rotation: every refresh returns a new refresh token

            def authenticate_refresh_token(self, refresh_token):
                store.count(self.request.client.client_id if self.request.client else None, "refresh_requests")
                with store.lock:
                    token = store.tokens_by_refresh.get(refresh_token)
                    if token and not token.refresh_revoked:
                        return token
                return None

            def authenticate_user(self, refresh_token):
                return refresh_token.user

            def issue_token(self, user, refresh_token):
                if self.request.client.rotates_refresh_tokens:
                    return super().issue_token(user, refresh_token)
                return self.generate_token(user=user, scope=self.request.payload.scope or refresh_token.get_scope(),
                                           include_refresh_token=False)

            def revoke_old_credential(self, refresh_token):
                if not self.request.client.rotates_refresh_tokens:
                    return
                with store.lock:
                    refresh_token.refresh_revoked = True

        class ClientCredentialsGrant(grants.ClientCredentialsGrant):
            TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]

        class DeviceGrant(DeviceCodeGrant):
            def query_device_credential(self, device_code):
                with store.lock:
                    return store.devices.get(device_code)

            def query_user_grant(self, user_code):
                with store.lock:
                    approved = store.device_grants.get(user_code)
                    credential = next((c for c in store.devices.values() if c["user_code"] == user_code), None)
                if approved is None and credential is not None and issuer.auto_approve_after is not None:
                    if time.time() - credential["created"] >= issuer.auto_approve_after:
                        approved = True
                if approved is None:
                    return None
                return issuer.user, approved

            def should_slow_down(self, credential):
                now = time.time()
                client_id = credential.get_client_id()
                store.count(client_id, "device_polls")
                with store.lock:
                    last = credential.get("last_poll")
                    credential["last_poll"] = now
                    if credential.pop("force_slow_down", False):
                        credential["interval"] += 5
                        return True
                    # Polling faster than the current interval (with a little slack for timers).
                    if last is not None and now - last < credential["interval"] - 0.2:
                        store.count(client_id, "slow_down_violations")
                        credential["interval"] += 5
                        return True
                return False

        class ServiceAccountGrant(JWTBearerGrant):
            """Google's service-account grant: an RS256 assertion signed with the account's key,
            `iss` the account's email, `aud` this token endpoint, `scope` in the claims (not the
            form), `iat`/`exp` at most an hour apart, an optional `sub` to act for a user."""

            CLAIMS_OPTIONS = {
                "iss": {"essential": True}, "aud": {"essential": True},
                "exp": {"essential": True}, "iat": {"essential": True},
            }

            def get_audiences(self):
                return [f"{issuer.url}/token"]

            def resolve_issuer_client(self, iss):
                if issuer.service_accounts.get(iss) is None:
                    return None
                with store.lock:
                    return store.clients.get(iss)

            def resolve_client_public_key(self, client):
                return issuer.service_accounts.get(client.client_id).public_jwk()

            def process_assertion_claims(self, assertion):
                headers, unverified = self.extract_assertion(assertion)
                account = issuer.service_accounts.get(unverified.get("iss"))
                if account is not None:
                    store.count(account.email, "token_requests")
                    store.count(account.email, "jwt_bearer_requests")
                if headers.get("alg") != "RS256":
                    raise InvalidGrantError(description="the assertion must be signed with RS256")
                # Like Google: a kid must name the account's key; without one, the account's key is tried.
                if account is not None and headers.get("kid") not in (None, account.key_id):
                    raise InvalidGrantError(description="the assertion's kid is not the service account's private_key_id")
                claims = super().process_assertion_claims(assertion)
                problem = service_accounts.check_lifetime(claims)
                if problem is not None:
                    raise InvalidGrantError(description=f"invalid assertion: {problem}")
                target_audience = claims.get("target_audience")
                self.request.assertion_target_audience = None
                if target_audience is not None:
                    # Google's ID-token grant: the answer is {"id_token": ...} for that audience.
                    if not isinstance(target_audience, str) or not target_audience or issuer.id_tokens is None:
                        raise InvalidGrantError(description="invalid assertion: target_audience must be a non-empty string")
                    if account is not None:
                        store.count(account.email, "id_token_requests")
                    self.request.assertion_target_audience = target_audience
                    self.request.assertion_scope = None
                    return claims
                scope = claims.get("scope")
                if not isinstance(scope, str) or not scope.strip():
                    raise InvalidScopeError(description="the assertion has no scope claim")
                self.request.assertion_scope = scope
                return claims

            def authenticate_user(self, subject):
                # Domain-wide delegation: the sandbox user is the only user there is.
                return issuer.user if subject == issuer.user["email"] else None

            def has_granted_permission(self, client, user):
                return True

            def create_token_response(self):
                audience = getattr(self.request, "assertion_target_audience", None)
                if audience is not None:
                    account = issuer.service_accounts.get(self.request.client.client_id)
                    return 200, {"id_token": issuer.id_tokens.issue(account.email, account.client_id, audience)}, \
                        self.TOKEN_RESPONSE_HEADER
                token = self.generate_token(scope=self.request.assertion_scope, user=self.request.user,
                                            include_refresh_token=False)
                self.save_token(token)
                return 200, token, self.TOKEN_RESPONSE_HEADER

        class DeviceEndpoint(DeviceAuthorizationEndpoint):
            CLIENT_AUTH_METHODS = ALL_AUTH_METHODS

            def get_verification_uri(self):
                return f"{issuer.url}/device" + (HOSTILE_TEXT if issuer.hostile_text else "")

            def generate_user_code(self):
                code = super().generate_user_code()
                return code + HOSTILE_TEXT if issuer.hostile_text else code

            def save_device_credential(self, client_id, scope, data):
                client = store.clients.get(client_id)
                interval = client.device_interval if client and client.device_interval is not None else issuer.device_interval
                data["interval"] = interval  # `data` is also the response body
                credential = DeviceCredentialDict(
                    client_id=client_id, scope=scope, created=time.time(),
                    expires_at=time.time() + data["expires_in"], **data)
                with store.lock:
                    store.devices[data["device_code"]] = credential

        class Revocation(RevocationEndpoint):
            CLIENT_AUTH_METHODS = ALL_AUTH_METHODS

            def query_token(self, token_string, token_type_hint):
                with store.lock:
                    if token_type_hint == "refresh_token":
                        return store.tokens_by_refresh.get(token_string) or store.tokens_by_access.get(token_string)
                    return store.tokens_by_access.get(token_string) or store.tokens_by_refresh.get(token_string)

            def revoke_token(self, token, oauth_request):
                hint = oauth_request.form.get("token_type_hint")
                value = oauth_request.form.get("token")
                with store.lock:
                    if value == token.refresh_token and hint != "access_token":
                        # A revoked refresh token takes the whole grant with it (RFC 7009 section 2.1).
                        for item in list(store.tokens_by_access.values()):
                            if item.family == token.family:
                                item.access_revoked = True
                                item.refresh_revoked = True
                    else:
                        token.access_revoked = True

        class Introspection(IntrospectionEndpoint):
            CLIENT_AUTH_METHODS = ALL_AUTH_METHODS

            def query_token(self, token_string, token_type_hint):
                with store.lock:
                    return store.tokens_by_access.get(token_string) or store.tokens_by_refresh.get(token_string)

            def introspect_token(self, token):
                user = token.user or {}
                return {
                    "active": True, "client_id": token.client.client_id, "token_type": "Bearer",
                    "scope": token.scope, "sub": user.get("sub"), "username": user.get("email"),
                    "exp": int(token.issued_at + token.expires_in), "iat": int(token.issued_at), "iss": issuer.url,
                }

            def check_permission(self, token, client, oauth_request):
                return True

        server.register_grant(AuthorizationCodeGrant, [CodeChallenge(required=True)])
        server.register_grant(RefreshTokenGrant)
        server.register_grant(ClientCredentialsGrant)
        server.register_grant(DeviceGrant)
        server.register_grant(ServiceAccountGrant)
        server.register_endpoint(DeviceEndpoint)
        server.register_endpoint(Revocation)
        server.register_endpoint(Introspection)

        def discovery(tenant=None):
            base = issuer.url
            document = {
                "issuer": base,
                "authorization_endpoint": f"{base}/authorize",
                "token_endpoint": f"{base}/token",
                "device_authorization_endpoint": f"{base}/device_authorization",
                "revocation_endpoint": f"{base}/revoke",
                "introspection_endpoint": f"{base}/introspect",
                "userinfo_endpoint": f"{base}/userinfo",
                "jwks_uri": f"{base}/jwks",
                "response_types_supported": ["code"],
                "grant_types_supported": USER_GRANTS + ["client_credentials", JWT_BEARER_GRANT],
                "code_challenge_methods_supported": ["S256", "plain"],
                "token_endpoint_auth_methods_supported": ALL_AUTH_METHODS,
                "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["RS256"],
                "scopes_supported": ["openid", "email", "https://www.googleapis.com/auth/xapi.zoo"],
            }
            if tenant is not None:
                with store.lock:
                    overrides = store.tenants.get(tenant)
                if overrides is None:
                    return jsonify({"error": "no such tenant"}), 404
                document.update(overrides, issuer=f"{base}/tenants/{tenant}")
            return jsonify(document)

        @app.after_request
        def hostile_error_description(response):
            # --hostile-text: every OAuth error answer describes itself with HOSTILE_TEXT.
            if issuer.hostile_text and response.status_code >= 400 and response.is_json:
                body = response.get_json(silent=True)
                if isinstance(body, dict) and "error" in body:
                    body["error_description"] = HOSTILE_TEXT
                    response.set_data(json.dumps(body))
            return response

        app.add_url_rule("/.well-known/openid-configuration", "oidc", discovery)
        app.add_url_rule("/tenants/<tenant>/.well-known/openid-configuration", "tenant-oidc", discovery)
        app.add_url_rule("/.well-known/oauth-authorization-server", "rfc8414", discovery)

        @app.route("/authorize", methods=["GET"])
        def authorize():
            # Automatic consent: the sandbox user is always signed in and always agrees.
            try:
                grant = server.get_consent_grant(end_user=issuer.user)
            except OAuth2Error as error:
                return server.handle_error_response(None, error)
            return server.create_authorization_response(grant=grant, grant_user=issuer.user)

        @app.route("/token", methods=["POST"])
        def token():
            client_id = request.form.get("client_id") or (request.authorization.username if request.authorization else None)
            store.count(client_id, "token_requests")
            with store.lock:
                behaviour = dict(store.token_behaviour.get(client_id, {}))
                hold = store.token_holds.get(client_id) if behaviour.get("hold") else None
            if hold is not None:
                # Until /sandbox/token-release (bounded, so a test that never releases ends).
                hold.wait(60)
            if behaviour.get("delay_ms"):
                time.sleep(behaviour["delay_ms"] / 1000)
            if behaviour.get("status"):
                return jsonify({"error": "temporarily_unavailable", "error_description": "the sandbox was told to fail"}), behaviour["status"]
            return server.create_token_response()

        @app.route("/device_authorization", methods=["POST"])
        def device_authorization():
            return server.create_endpoint_response(DeviceEndpoint.ENDPOINT_NAME)

        @app.route("/revoke", methods=["POST"])
        def revoke():
            return server.create_endpoint_response(Revocation.ENDPOINT_NAME)

        @app.route("/introspect", methods=["POST"])
        def introspect():
            return server.create_endpoint_response(Introspection.ENDPOINT_NAME)

        @app.route("/userinfo", methods=["GET", "POST"])
        def userinfo():
            header = request.headers.get("Authorization", "")
            identity = issuer.validate_access_token(header[7:].strip()) if header[:7].lower() == "bearer " else None
            if identity is None:
                return jsonify({"error": "invalid_token"}), 401, {"WWW-Authenticate": 'Bearer error="invalid_token"'}
            return jsonify({"sub": identity["sub"], "email": identity["user"], "email_verified": True})

        @app.route("/jwks")
        def jwks():
            return jsonify({"keys": [issuer.signing_key.as_dict(private=False)]})

        @app.route("/device", methods=["GET", "POST"])
        def device_page():
            user_code = (request.values.get("user_code") or "").strip().upper()
            if request.method == "POST" and user_code:
                return _decide(user_code, True)
            return (
                "<!doctype html><title>Sandbox device sign-in</title>"
                "<p>Signed in as sandbox-user@example.com. Enter the code shown on your device:</p>"
                f"<form method=post><input name=user_code value=\"{user_code}\"><button>Allow</button></form>"
            )

        def _decide(user_code, approved):
            with store.lock:
                known = any(c["user_code"] == user_code for c in store.devices.values())
                if known:
                    store.device_grants[user_code] = approved
            if not known:
                return jsonify({"error": "unknown user_code"}), 404
            return jsonify({"user_code": user_code, "approved": approved})

        @app.route("/robot/v1/metadata/x509/<path:email>")
        def service_account_certificates(email):
            # Google's format: {private_key_id: PEM certificate}, what google.auth.jwt.decode takes.
            account = issuer.service_accounts.get(urllib.parse.unquote(email))
            if account is None:
                return jsonify({"error": "unknown service account"}), 404
            return jsonify({account.key_id: account.certificate_pem})

        # -- test-only endpoints ----------------------------------------------------------------

        @app.route("/sandbox/service-accounts", methods=["POST"])
        def create_service_account():
            body = request.get_json(silent=True) or {}
            account = issuer.add_service_account(token_lifetime=body.get("token_lifetime"))
            return jsonify(issuer.service_account_key(account))

        @app.route("/sandbox/authorized-users", methods=["POST"])
        def create_authorized_user():
            body = request.get_json(silent=True) or {}
            return jsonify(issuer.authorized_user(quota_project_id=body.get("quota_project_id"),
                                                  token_lifetime=body.get("token_lifetime")))

        @app.route("/sandbox/clients", methods=["POST"])
        def create_client():
            body = request.get_json(silent=True) or {}
            client_id = "test-" + secrets.token_hex(6)
            confidential = bool(body.get("confidential"))
            secret = secrets.token_urlsafe(24) if confidential else None
            methods = [body["auth_method"]] if body.get("auth_method") else None
            grant_types = body.get("grant_types") or (USER_GRANTS + (["client_credentials"] if confidential else []))
            client = Client(client_id, secret=secret, grant_types=grant_types, token_lifetime=body.get("token_lifetime"),
                            auth_methods=methods, device_interval=body.get("device_interval"))
            with store.lock:
                store.clients[client_id] = client
            result = {"client_id": client_id}
            if secret:
                result["client_secret"] = secret
            return jsonify(result)

        @app.route("/sandbox/stats")
        def stats():
            client_id = request.args.get("client_id")
            with store.lock:
                if client_id:
                    counters = dict(store.stats.get(client_id, {}))
                else:
                    counters = json.loads(json.dumps(store.stats))
            return jsonify(counters)

        @app.route("/sandbox/access-tokens")
        def access_tokens():
            # For tests that check a client never prints the tokens it was given.
            client_id = request.args.get("client_id")
            if not client_id:
                return jsonify({"error": "client_id is required"}), 400
            with store.lock:
                tokens = [token.access_token for token in store.tokens_by_access.values() if token.client.client_id == client_id]
            return jsonify({"access_tokens": tokens})

        @app.route("/sandbox/device/approve", methods=["POST"])
        def approve():
            return _decide((request.values.get("user_code") or "").strip().upper(), True)

        @app.route("/sandbox/device/deny", methods=["POST"])
        def deny():
            return _decide((request.values.get("user_code") or "").strip().upper(), False)

        @app.route("/sandbox/device/slow-down", methods=["POST"])
        def slow_down():
            user_code = (request.values.get("user_code") or "").strip().upper()
            with store.lock:
                credential = next((c for c in store.devices.values() if c["user_code"] == user_code), None)
                if credential is not None:
                    credential["force_slow_down"] = True
            if credential is None:
                return jsonify({"error": "unknown user_code"}), 404
            return jsonify({"user_code": user_code})

        @app.route("/sandbox/revoke-all", methods=["POST"])
        def revoke_all():
            client_id = request.values.get("client_id")
            revoked = 0
            with store.lock:
                for token in store.tokens_by_access.values():
                    if token.client.client_id == client_id and not (token.access_revoked and token.refresh_revoked):
                        token.access_revoked = True
                        token.refresh_revoked = True
                        revoked += 1
            return jsonify({"revoked": revoked})

        @app.route("/sandbox/outage", methods=["POST"])
        def outage():
            seconds = float(request.values.get("seconds") or 0)
            while_exists = request.values.get("while_exists") or None
            if not 0 < seconds <= 60:
                return jsonify({"error": "seconds must be between 0 and 60"}), 400
            if while_exists is not None and not os.path.isabs(while_exists):
                return jsonify({"error": "while_exists must be an absolute path"}), 400
            issuer.outage(seconds, while_exists)
            return jsonify({"down_for": seconds, "while_exists": while_exists})

        @app.route("/sandbox/token-behaviour", methods=["POST"])
        def token_behaviour():
            client_id = request.values.get("client_id")
            try:
                delay_ms = int(request.values.get("delay_ms") or 0)
                status = int(request.values.get("status") or 0)
                hold = int(request.values.get("hold") or 0)
            except ValueError:
                return jsonify({"error": "delay_ms, status and hold must be integers"}), 400
            if not client_id or not 0 <= delay_ms <= 60_000 or not (status == 0 or 400 <= status <= 599) \
                    or hold not in (0, 1):
                return jsonify({"error": "client_id is required, delay_ms must be 0...60000, status 0 or 400...599, "
                                         "hold 0 or 1"}), 400
            with store.lock:
                store.token_behaviour[client_id] = {"delay_ms": delay_ms, "status": status, "hold": bool(hold)}
                if hold:
                    store.token_holds[client_id] = threading.Event()
            return jsonify({"client_id": client_id, "delay_ms": delay_ms, "status": status, "hold": bool(hold)})

        @app.route("/sandbox/token-release", methods=["POST"])
        def token_release():
            client_id = request.values.get("client_id")
            with store.lock:
                behaviour = store.token_behaviour.get(client_id)
                gate = store.token_holds.pop(client_id, None)
                if behaviour:
                    behaviour["hold"] = False
            if gate is None:
                return jsonify({"error": "no token requests of this client are held"}), 400
            gate.set()
            return jsonify({"client_id": client_id, "released": True})

        @app.route("/sandbox/token-lifetime", methods=["POST"])
        def token_lifetime():
            client_id = request.values.get("client_id")
            try:
                lifetime = int(request.values.get("token_lifetime") or 0)
            except ValueError:
                lifetime = 0
            if not 1 <= lifetime <= 86_400:
                return jsonify({"error": "token_lifetime must be 1...86400 seconds"}), 400
            with store.lock:
                client = store.clients.get(client_id)
                if client is not None:
                    client.token_lifetime = lifetime
            if client is None:
                return jsonify({"error": "unknown client_id"}), 404
            return jsonify({"client_id": client_id, "token_lifetime": lifetime})

        @app.route("/sandbox/tenants", methods=["POST"])
        def create_tenant():
            body = request.get_json(silent=True) or {}
            overrides = body.get("endpoints") or {}
            if not isinstance(overrides, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in overrides.items()):
                return jsonify({"error": "endpoints must map names to URL strings"}), 400
            tenant = "t-" + secrets.token_hex(6)
            with store.lock:
                store.tenants[tenant] = dict(overrides)
            return jsonify({"issuer": f"{issuer.url}/tenants/{tenant}"})

        @app.route("/sandbox/expire-access-tokens", methods=["POST"])
        def expire_access_tokens():
            client_id = request.values.get("client_id")
            with store.lock:
                for token in store.tokens_by_access.values():
                    if token.client.client_id == client_id:
                        token.access_revoked = True
            return jsonify({"ok": True})

        return app
