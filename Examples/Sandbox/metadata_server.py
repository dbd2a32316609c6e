"""A loopback stand-in for the Compute Engine metadata server (the part credentials use).

    GET /                                                        (google-auth's "am I on GCE?" ping)
    GET /computeMetadata/v1/instance/service-accounts/default/token[?scopes=a,b]
    GET /computeMetadata/v1/instance/service-accounts/default/email
    GET /computeMetadata/v1/instance/service-accounts/default/identity?audience=AUD[&format=full]
    GET /computeMetadata/v1/instance/service-accounts/default/[?recursive=true]
    GET /computeMetadata/v1/project/project-id
    GET /computeMetadata/v1/universe/universe-domain          (404 until a test sets one, as on
                                                              servers that predate universes)

`<email>` may stand for `default` in the service-account paths (google-auth asks by email once
it knows it). Like the real server, every request must carry `Metadata-Flavor: Google` (403
otherwise) and every answer carries it. Tokens come from the sandbox issuer, so the gRPC test
service accepts them as the instance's service account; ID tokens (`identity`, a JWT as plain
text, 400 without an audience; `format=full` adds the `google.compute_engine` claim) from the
sandbox's Google-style signer. Tokens are never logged.

Test-only endpoints, under /sandbox/ (no Metadata-Flavor needed):

    GET  /sandbox/stats              {"token_requests", "identity_requests", "requests_without_flavor"}
    GET  /sandbox/identity-requests  the query of every identity request, oldest first (at most 100)
    POST /sandbox/omit-flavor        {"enabled": bool}: answer without Metadata-Flavor (a
                                     server that is not the metadata server)
    POST /sandbox/fail-tokens        {"status": N, "count": K}: the next K token requests get
                                     HTTP N
    POST /sandbox/universe-domain    {"domain": TEXT or null}: what universe/universe-domain
                                     answers (TEXT as is, at most 300 characters, so a test can
                                     send a bad one), or 404 for null
"""

import json
import logging
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

log = logging.getLogger("sandbox.metadata")

FLAVOR_HEADER = "Metadata-Flavor"
FLAVOR = "Google"
ACCOUNT_PREFIX = "/computeMetadata/v1/instance/service-accounts/"
MAX_BODY_BYTES = 4096


class MetadataServer:
    """The emulator; `mint(scope)` returns the issuer's token answer for the instance's account."""

    def __init__(self, host, port, email, project_id, default_scopes, mint, identity=None):
        self.email = email
        self.project_id = project_id
        self.default_scopes = list(default_scopes)
        self.mint = mint
        #: `identity(audience, include_email, extra_claims)` signs an ID token for the account.
        self.identity = identity
        self._lock = threading.Lock()
        self._stats = {"token_requests": 0, "identity_requests": 0, "requests_without_flavor": 0,
                       "universe_requests": 0}
        self._identity_queries = []
        self._omit_flavor = False
        self._failures = []  # HTTP statuses for the next token requests
        self._universe_domain = None  # None: universe/universe-domain answers 404
        self._server = ThreadingHTTPServer((host, port), self._handler_class())
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        bracketed = f"[{host}]" if ":" in host else host
        #: What GCE_METADATA_HOST should be set to.
        self.authority = f"{bracketed}:{self.port}"
        self._thread = None

    def start(self):
        self._thread = threading.Thread(target=self._server.serve_forever, name="metadata", daemon=True)
        self._thread.start()
        return self.port

    def stop(self):
        self._server.shutdown()
        self._server.server_close()

    def _count(self, name):
        with self._lock:
            self._stats[name] += 1

    def _handler_class(self):
        emulator = self

        class Handler(BaseHTTPRequestHandler):
            server_version = "Metadata Server for VM"
            sys_version = ""

            def log_message(self, format, *arguments):  # the request line may carry scopes, never tokens
                log.info("%s %s", self.address_string(), format % arguments)

            def answer(self, status, body, content_type="application/text", flavor=True):
                data = body.encode() if isinstance(body, str) else body
                self.send_response(status)
                if flavor and not emulator._omit_flavor:
                    self.send_header(FLAVOR_HEADER, FLAVOR)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def answer_json(self, status, document, flavor=True):
                self.answer(status, json.dumps(document), "application/json", flavor)

            def do_GET(self):
                url = urllib.parse.urlsplit(self.path)
                query = urllib.parse.parse_qs(url.query)
                if url.path == "/sandbox/stats":
                    with emulator._lock:
                        return self.answer_json(200, dict(emulator._stats), flavor=False)
                if url.path == "/sandbox/identity-requests":
                    with emulator._lock:
                        return self.answer_json(200, list(emulator._identity_queries), flavor=False)
                if self.headers.get(FLAVOR_HEADER) != FLAVOR:
                    emulator._count("requests_without_flavor")
                    return self.answer(403, "Missing Metadata-Flavor:Google header.\n", "text/html")
                if url.path == "/":
                    return self.answer(200, "computeMetadata/\n")
                if url.path == "/computeMetadata/v1/project/project-id":
                    return self.answer(200, emulator.project_id)
                if url.path == "/computeMetadata/v1/universe/universe-domain":
                    emulator._count("universe_requests")
                    with emulator._lock:
                        domain = emulator._universe_domain
                    if domain is None:
                        return self.answer(404, "not found\n", "text/html")
                    return self.answer(200, domain)
                if url.path.startswith(ACCOUNT_PREFIX):
                    account, _, rest = url.path[len(ACCOUNT_PREFIX):].partition("/")
                    if urllib.parse.unquote(account) not in ("default", emulator.email):
                        return self.answer(404, "not found\n", "text/html")
                    if rest == "token":
                        return self.token(query)
                    if rest == "identity" and emulator.identity is not None:
                        return self.identity(query)
                    if rest == "email":
                        return self.answer(200, emulator.email)
                    if rest == "" and query.get("recursive") == ["true"]:
                        return self.answer_json(200, {"aliases": ["default"], "email": emulator.email,
                                                      "scopes": emulator.default_scopes})
                return self.answer(404, "not found\n", "text/html")

            def token(self, query):
                emulator._count("token_requests")
                with emulator._lock:
                    failure = emulator._failures.pop(0) if emulator._failures else None
                if failure is not None:
                    return self.answer(failure, "the sandbox was told to fail this token request\n", "text/html")
                scopes = [scope for value in query.get("scopes", []) for scope in value.split(",") if scope]
                minted = emulator.mint(" ".join(scopes or emulator.default_scopes))
                return self.answer_json(200, {"access_token": minted["access_token"],
                                              "expires_in": minted["expires_in"], "token_type": "Bearer"})

            def identity(self, query):
                emulator._count("identity_requests")
                with emulator._lock:
                    emulator._identity_queries.append({key: values for key, values in query.items()})
                    del emulator._identity_queries[:-100]
                audience = query.get("audience", [""])[0]
                if not audience:
                    return self.answer(400, "non-empty audience parameter required\n", "text/html")
                extra = None
                if query.get("format", ["standard"])[0] == "full":
                    extra = {"google": {"compute_engine": {
                        "project_id": emulator.project_id, "project_number": 123456789012,
                        "zone": "sandbox-zone-a", "instance_id": "1234567890123456789",
                        "instance_name": "sandbox-instance"}}}
                return self.answer(200, emulator.identity(audience, True, extra))

            def do_POST(self):
                url = urllib.parse.urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                if not 0 <= length <= MAX_BODY_BYTES:
                    return self.answer_json(413, {"error": "body too large"}, flavor=False)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    return self.answer_json(400, {"error": "the body is not JSON"}, flavor=False)
                if url.path == "/sandbox/omit-flavor":
                    emulator._omit_flavor = bool(body.get("enabled"))
                    return self.answer_json(200, {"omit_flavor": emulator._omit_flavor}, flavor=False)
                if url.path == "/sandbox/fail-tokens":
                    status, count = body.get("status"), body.get("count", 1)
                    if not isinstance(status, int) or not 400 <= status <= 599 or not isinstance(count, int) or not 0 < count <= 100:
                        return self.answer_json(400, {"error": "status must be 400-599 and count 1-100"}, flavor=False)
                    with emulator._lock:
                        emulator._failures = [status] * count
                    return self.answer_json(200, {"status": status, "count": count}, flavor=False)
                if url.path == "/sandbox/universe-domain":
                    domain = body.get("domain")
                    if domain is not None and (not isinstance(domain, str) or len(domain) > 300):
                        return self.answer_json(400, {"error": "domain must be null or a string of at most 300 characters"},
                                                flavor=False)
                    with emulator._lock:
                        emulator._universe_domain = domain
                    return self.answer_json(200, {"domain": domain}, flavor=False)
                return self.answer(404, "not found\n", "text/html")

        return Handler
