"""A loopback stand-in for the IAM Service Account Credentials API (iamcredentials.googleapis.com),
the two methods impersonation uses:

    POST /v1/projects/-/serviceAccounts/EMAIL:generateAccessToken
         {"delegates": [...], "scope": [...], "lifetime": "3600s"}  ->  {"accessToken", "expireTime"}
    POST /v1/projects/-/serviceAccounts/EMAIL:generateIdToken
         {"delegates": [...], "audience": "...", "includeEmail": bool}  ->  {"token"}

Like the real API, every request must carry `Authorization: Bearer <token>` from a principal the
sandbox issued a token to (an authorized user, a service account, the metadata server's
account); the chain caller -> delegates... -> target must hold the Token Creator role link by
link (granted with `allow(target, principal)`); delegates are `projects/-/serviceAccounts/EMAIL`
(a bare email is taken too, as Google takes it); a lifetime is `<seconds>s`, 1 to 3600. Refusals
are Google's JSON errors ({"error": {"code", "message", "status"}}): 401 UNAUTHENTICATED, 403
PERMISSION_DENIED, 400 INVALID_ARGUMENT, 404 NOT_FOUND. Access tokens come from the sandbox
issuer (so the gRPC test service accepts them as the target account), ID tokens from the
sandbox's Google-style signer (id_tokens.py). Tokens are never logged.

Test-only endpoints, under /sandbox/:

    GET  /sandbox/requests   the last requests, oldest first: {"method", "path", "content_type",
                             "caller" (the principal), "body"} (the bearer token is not kept)
    POST /sandbox/reset      forgets the recorded requests
    POST /sandbox/allow      {"target", "principal"}: grants the Token Creator role (a federated
                             principal a test's own pool makes, principal://iam.googleapis.com/...)
"""

import datetime
import json
import logging
import re
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

log = logging.getLogger("sandbox.iam")

MAX_BODY_BYTES = 16 * 1024
MAX_RECORDED = 100
MAX_LIFETIME = 3600
PATH = re.compile(r"^/v1/projects/-/serviceAccounts/([^/:]+):(generateAccessToken|generateIdToken)$")
DELEGATE_PREFIX = "projects/-/serviceAccounts/"


class IAMCredentials:
    """The emulator. `validate(token)` is the sandbox's access-token check (it returns
    {"user", ...} or None); `mint(email, scope, lifetime)` the issuer's token for an account;
    `id_tokens` the ID-token signer; `account_id(email)` an account's numeric id (None when it
    does not exist)."""

    def __init__(self, host, port, validate, mint, id_tokens, account_id):
        self.validate = validate
        self.mint = mint
        self.id_tokens = id_tokens
        self.account_id = account_id
        self._lock = threading.Lock()
        self._token_creators = {}  # target email -> principals that may impersonate it
        self._requests = []
        self._server = ThreadingHTTPServer((host, port), self._handler_class())
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        bracketed = f"[{host}]" if ":" in host else host
        self.url = f"http://{bracketed}:{self.port}"
        self._thread = None

    def allow(self, target, principal):
        """Grants `principal` the Token Creator role on the service account `target`."""
        with self._lock:
            self._token_creators.setdefault(target, set()).add(principal)

    def endpoint(self, email, method="generateAccessToken"):
        return f"{self.url}/v1/projects/-/serviceAccounts/{email}:{method}"

    def start(self):
        self._thread = threading.Thread(target=self._server.serve_forever, name="iam", daemon=True)
        self._thread.start()
        return self.port

    def stop(self):
        self._server.shutdown()
        self._server.server_close()

    def _may_impersonate(self, principal, target):
        with self._lock:
            return principal in self._token_creators.get(target, set())

    def _handler_class(self):
        emulator = self

        class Handler(BaseHTTPRequestHandler):
            server_version = "ESF"
            sys_version = ""

            def log_message(self, format, *arguments):  # the request line carries no token
                log.info("%s %s", self.address_string(), format % arguments)

            def answer(self, status, document):
                data = json.dumps(document).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=UTF-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def refuse(self, status, google_status, message):
                return self.answer(status, {"error": {"code": status, "message": message, "status": google_status}})

            def do_GET(self):
                if urllib.parse.urlsplit(self.path).path == "/sandbox/requests":
                    with emulator._lock:
                        return self.answer(200, list(emulator._requests))
                return self.refuse(404, "NOT_FOUND", "not found")

            def do_POST(self):
                path = urllib.parse.urlsplit(self.path).path
                length = int(self.headers.get("Content-Length") or 0)
                if not 0 <= length <= MAX_BODY_BYTES:
                    return self.refuse(413, "INVALID_ARGUMENT", "the request body is too large")
                raw = self.rfile.read(length)
                if path == "/sandbox/allow":
                    try:
                        grant = json.loads(raw or b"{}")
                    except ValueError:
                        grant = None
                    if not isinstance(grant, dict) or not all(
                            isinstance(grant.get(name), str) and grant.get(name) for name in ("target", "principal")):
                        return self.refuse(400, "INVALID_ARGUMENT", "target and principal are required strings")
                    emulator.allow(grant["target"], grant["principal"])
                    return self.answer(200, {})
                if path == "/sandbox/reset":
                    with emulator._lock:
                        emulator._requests.clear()
                    return self.answer(200, {})
                match = PATH.match(path)
                if match is None:
                    return self.refuse(404, "NOT_FOUND", "no such method")
                target, method = urllib.parse.unquote(match.group(1)), match.group(2)

                scheme, _, token = (self.headers.get("Authorization") or "").partition(" ")
                identity = emulator.validate(token.strip()) if scheme.lower() == "bearer" and token.strip() else None
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = None
                with emulator._lock:
                    emulator._requests.append({
                        "method": method, "path": path,
                        "content_type": self.headers.get("Content-Type"),
                        "caller": identity.get("user") if identity else None, "body": body})
                    del emulator._requests[:-MAX_RECORDED]
                if identity is None:
                    return self.refuse(401, "UNAUTHENTICATED",
                                       "Request had invalid authentication credentials. Expected OAuth 2 access token.")
                if not isinstance(body, dict):
                    return self.refuse(400, "INVALID_ARGUMENT", "the request body is not a JSON object")
                if emulator.account_id(target) is None:
                    return self.refuse(404, "NOT_FOUND", f"Service account {target} does not exist.")

                delegates = body.get("delegates") or []
                if not isinstance(delegates, list) or not all(isinstance(item, str) for item in delegates):
                    return self.refuse(400, "INVALID_ARGUMENT", "delegates must be a list of strings")
                chain = [identity["user"]]
                for delegate in delegates:
                    email = delegate[len(DELEGATE_PREFIX):] if delegate.startswith(DELEGATE_PREFIX) else delegate
                    if "/" in email or "@" not in email:
                        return self.refuse(400, "INVALID_ARGUMENT", f"delegate {delegate!r} is not projects/-/serviceAccounts/EMAIL")
                    chain.append(email)
                chain.append(target)
                for caller, callee in zip(chain, chain[1:]):
                    if not emulator._may_impersonate(caller, callee):
                        return self.refuse(403, "PERMISSION_DENIED",
                                           f"Permission 'iam.serviceAccounts.getAccessToken' denied on resource "
                                           f"(or it may not exist): {callee} for {caller}.")
                if method == "generateAccessToken":
                    return self.access_token(target, body)
                return self.id_token(target, body)

            def access_token(self, target, body):
                scope = body.get("scope")
                if not isinstance(scope, list) or not scope or not all(isinstance(item, str) and item for item in scope):
                    return self.refuse(400, "INVALID_ARGUMENT", "scope must be a non-empty list of scopes")
                lifetime_text = body.get("lifetime", "3600s")
                lifetime_match = re.fullmatch(r"(\d{1,6})(?:\.\d{1,9})?s", lifetime_text) if isinstance(lifetime_text, str) else None
                if lifetime_match is None:
                    return self.refuse(400, "INVALID_ARGUMENT", "lifetime must be a duration like 3600s")
                lifetime = int(lifetime_match.group(1))
                if not 1 <= lifetime <= MAX_LIFETIME:
                    return self.refuse(400, "INVALID_ARGUMENT",
                                       f"The lifetime must be between 1s and {MAX_LIFETIME}s (got {lifetime_text}).")
                minted = emulator.mint(target, " ".join(scope), lifetime)
                expires = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0) + datetime.timedelta(seconds=lifetime)
                return self.answer(200, {"accessToken": minted["access_token"],
                                         "expireTime": expires.strftime("%Y-%m-%dT%H:%M:%SZ")})

            def id_token(self, target, body):
                audience = body.get("audience")
                if not isinstance(audience, str) or not audience:
                    return self.refuse(400, "INVALID_ARGUMENT", "audience is required")
                include_email = body.get("includeEmail", False)
                if not isinstance(include_email, bool):
                    return self.refuse(400, "INVALID_ARGUMENT", "includeEmail must be a boolean")
                token = emulator.id_tokens.issue(target, emulator.account_id(target), audience, include_email)
                return self.answer(200, {"token": token})

        return Handler
