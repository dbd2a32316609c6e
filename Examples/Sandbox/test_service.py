"""grpc.testing.TestService on grpcio: gRPC's interop behaviours plus the auth sample's identity echo.

The service runs twice, on a TLS port (a bearer token is required) and on a plaintext port
(anonymous calls allowed, but an anonymous call cannot ask for the caller's identity). See
README.md for the request knobs.
"""

import functools
import hashlib
import importlib
import logging
import os
import sys
import threading
from concurrent import futures

import grpc

TEST_SCOPE = "https://www.googleapis.com/auth/xapi.zoo"
MAX_MESSAGE_BYTES = 8 << 20
# Room for the SimpleResponse framing around the payload, so an allowed size is always sendable.
MAX_RESPONSE_PAYLOAD_BYTES = MAX_MESSAGE_BYTES - 1024
MAX_SLEEP_MS = 60_000
REALM = "sandbox"

SLEEP_KEY = "x-sandbox-sleep-ms"
ECHO_HEADERS_KEY = "x-sandbox-echo-headers"
ECHO_INITIAL_KEY = "x-grpc-test-echo-initial"
ECHO_TRAILING_KEY = "x-grpc-test-echo-trailing-bin"
USER_PROJECT_KEY = "x-goog-user-project"
USER_PROJECT_ECHO_KEY = "x-sandbox-user-project"

PROTO_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "Protos", "grpc", "testing"))

log = logging.getLogger("sandbox.grpc")

_STATUS_CODES = {code.value[0]: code for code in grpc.StatusCode}


def load_protos(output_dir):
    """Generates interop_pb2 / interop_pb2_grpc from Protos/grpc/testing/interop.proto and imports them.

    Only interop.proto is compiled (auth_sample.proto declares grpc.testing.TestService too and
    would clash in the descriptor pool). The modules are generated flat, outside any grpc/
    package directory, so they cannot shadow grpcio's own `grpc` package.
    """
    from grpc_tools import protoc

    proto = os.path.join(PROTO_DIR, "interop.proto")
    if not os.path.isfile(proto):
        raise RuntimeError(f"cannot find {proto}")
    os.makedirs(output_dir, exist_ok=True)
    well_known = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    status = protoc.main([
        "grpc_tools.protoc", f"-I{PROTO_DIR}", f"-I{well_known}",
        f"--python_out={output_dir}", f"--grpc_python_out={output_dir}", proto,
    ])
    if status != 0:
        raise RuntimeError(f"protoc failed with status {status} on {proto}")
    if output_dir not in sys.path:
        sys.path.insert(0, output_dir)
    importlib.invalidate_caches()
    return importlib.import_module("interop_pb2"), importlib.import_module("interop_pb2_grpc")


def fingerprint(token):
    """A short label that tells tokens apart in logs without revealing them."""
    return "sha256:" + hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()[:8]


class Call:
    """One call: its request metadata, the trailing metadata it will answer with, a log summary."""

    def __init__(self, context, method, port_label):
        self.context = context
        self.method = method
        self.port_label = port_label
        self.metadata = tuple(context.invocation_metadata() or ())
        self.peer = context.peer()  # read now: it is gone once the call is cancelled
        self.trailing = []
        self.who = "-"
        self.outcome = "OK"

    def values(self, key):
        return [value for name, value in self.metadata if name == key]

    def first(self, key):
        found = self.values(key)
        return found[0] if found else None

    def fail(self, code, message, extra_trailing=()):
        """Ends the call with `code`; the trailing metadata gathered so far goes with it."""
        self.outcome = code.name
        self.context.set_trailing_metadata(tuple(self.trailing) + tuple(extra_trailing))
        self.context.abort(code, message)

    def finish(self):
        if self.trailing:
            self.context.set_trailing_metadata(tuple(self.trailing))


def _rpc(method):
    """Wraps a servicer method: builds the Call, logs one line per call (never a token)."""

    @functools.wraps(method)
    def wrapper(self, request, context):
        call = Call(context, method.__name__, self.port_label)
        try:
            response = method(self, request, call)
            call.finish()
            return response
        except Exception:
            if call.outcome == "OK":  # not one of our own aborts: grpcio answers UNKNOWN
                call.outcome = "UNKNOWN (server error)"
                log.exception("%s %s failed", call.port_label, call.method)
            raise
        finally:
            log.info("%s %s from %s as %s -> %s",
                     call.port_label, call.method, call.peer, call.who, call.outcome)

    return wrapper


def authenticate(call, validate, require_token, wants_identity=False):
    """Checks the call's bearer token with `validate(token)`.

    Returns the caller's identity dict, None for an allowed anonymous call, or aborts the call
    UNAUTHENTICATED with a `www-authenticate` challenge."""
    headers = call.values("authorization")
    if not headers:
        call.who = "anonymous"
        if require_token or wants_identity:
            if not require_token:
                reason = "fill_username and fill_oauth_scope need an OAuth 2.0 bearer token"
            elif call.port_label == "tls":
                reason = "calls on the TLS port need an OAuth 2.0 bearer token"
            else:
                reason = "this method needs an OAuth 2.0 bearer token"
            call.fail(grpc.StatusCode.UNAUTHENTICATED, reason,
                      [("www-authenticate", f'Bearer realm="{REALM}"')])
        return None

    scheme, _, token = headers[0].strip().partition(" ")
    token = token.strip()
    if len(headers) > 1:
        problem, description = "more than one authorization header", "send exactly one authorization header"
    elif scheme.lower() != "bearer" or not token:
        problem, description = ("malformed authorization header (expected 'Bearer <token>')",
                                "the authorization header is not a bearer token")
    else:
        call.who = f"token {fingerprint(token)}"
        try:
            identity = validate(token)
        except Exception:
            log.exception("%s %s: checking token %s failed", call.port_label, call.method, fingerprint(token))
            call.fail(grpc.StatusCode.INTERNAL, "the sandbox could not check the access token")
        if identity is not None:
            call.who = f"{identity.get('user')} ({fingerprint(token)})"
            return identity
        problem, description = ("invalid or expired access token",
                                "the access token is invalid, expired or revoked")
    challenge = f'Bearer realm="{REALM}", error="invalid_token", error_description="{description}"'
    call.fail(grpc.StatusCode.UNAUTHENTICATED, problem, [("www-authenticate", challenge)])


def sleep_if_asked(call):
    """The `x-sandbox-sleep-ms` knob: waits that long (at most MAX_SLEEP_MS), or until the call ends."""
    text = call.first(SLEEP_KEY)
    if text is None:
        return
    try:
        milliseconds = int(text.strip())
        if milliseconds < 0:
            raise ValueError
    except ValueError:
        call.fail(grpc.StatusCode.INVALID_ARGUMENT, f"{SLEEP_KEY} must be a whole number of milliseconds")
    finished = threading.Event()
    # The callback fires when the call ends for any reason (deadline, cancel), waking us early.
    if call.context.add_callback(finished.set):
        finished.wait(min(milliseconds, MAX_SLEEP_MS) / 1000.0)
    if not call.context.is_active():
        call.fail(grpc.StatusCode.CANCELLED, "the call ended (deadline or cancel) while the server slept")


class SandboxTestService:
    """Builds the grpc.testing.TestService servicer for one port."""

    def __init__(self, pb, pbg, validate, require_token, port_label):
        """`validate(token)` returns {"user": ..., "scope": ...} for a good token, else None."""
        self.pb = pb
        self.validate = validate
        self.require_token = require_token
        self.port_label = port_label
        self.servicer = self._make_servicer(pbg)

    # -- the steps every implemented method takes ---------------------------------------------

    def _prepare_trailing_echoes(self, call):
        call.trailing += [(ECHO_TRAILING_KEY, value) for value in call.values(ECHO_TRAILING_KEY)]
        if call.first(ECHO_HEADERS_KEY) == "1":
            keys = list(dict.fromkeys(name for name, _ in call.metadata))  # received order, no repeats
            call.trailing += [
                ("x-sandbox-received-keys", ",".join(keys)),
                ("x-sandbox-user-agent", call.first("user-agent") or ""),
                ("x-sandbox-peer", call.peer),
            ]
            # The quota project Google bills (sent by user credentials with a quota_project_id).
            call.trailing += [(USER_PROJECT_ECHO_KEY, value) for value in call.values(USER_PROJECT_KEY)]

    def _authenticate(self, call, wants_identity):
        return authenticate(call, self.validate, self.require_token, wants_identity)

    def _begin(self, call, wants_identity=False):
        """Sleep knob, trailing echoes, auth, initial-metadata echo; returns the identity (or None)."""
        sleep_if_asked(call)
        self._prepare_trailing_echoes(call)
        identity = self._authenticate(call, wants_identity)
        initial = [(ECHO_INITIAL_KEY, value) for value in call.values(ECHO_INITIAL_KEY)]
        if initial:
            call.context.send_initial_metadata(initial)
        return identity

    # -- the servicer ---------------------------------------------------------------------------

    def _make_servicer(self, pbg):
        service = self
        pb = self.pb

        class Servicer(pbg.TestServiceServicer):
            port_label = self.port_label

            @_rpc
            def EmptyCall(self, request, call):
                service._begin(call)
                return pb.Empty()

            @_rpc
            def UnaryCall(self, request, call):
                identity = service._begin(call, wants_identity=request.fill_username or request.fill_oauth_scope)
                status = request.response_status
                if status.code != 0:
                    code = _STATUS_CODES.get(status.code, grpc.StatusCode.UNKNOWN)
                    call.fail(code, status.message)
                if not 0 <= request.response_size <= MAX_RESPONSE_PAYLOAD_BYTES:
                    call.fail(grpc.StatusCode.INVALID_ARGUMENT,
                              f"response_size must be between 0 and {MAX_RESPONSE_PAYLOAD_BYTES}")
                if request.response_compressed.value:
                    call.context.set_compression(grpc.Compression.Gzip)
                response = pb.SimpleResponse()
                response.payload.type = pb.COMPRESSABLE
                response.payload.body = bytes(request.response_size)
                if request.fill_username:
                    response.username = identity.get("user") or ""
                if request.fill_oauth_scope:
                    response.oauth_scope = identity.get("scope") or ""
                return response

            @_rpc
            def UnimplementedCall(self, request, call):
                # What grpcio's generated base class answers, minus the traceback it logs. Like an
                # unregistered service, this needs no credentials.
                call.fail(grpc.StatusCode.UNIMPLEMENTED, "Method not implemented!")

        return Servicer()


def listen(server, address, label, tls_key_pair):
    """Binds `server` to `address` (TLS with `tls_key_pair`, (key PEM, certificate PEM), or plaintext
    when it is None), starts it, and returns the bound port; a port that cannot be bound is an error
    naming the listener."""
    try:
        if tls_key_pair is not None:
            bound = server.add_secure_port(address, grpc.ssl_server_credentials([tls_key_pair]))
        else:
            bound = server.add_insecure_port(address)
    except RuntimeError as error:
        raise RuntimeError(f"cannot listen for gRPC ({label}) on {address}: {error}") from None
    if not bound:
        raise RuntimeError(f"cannot listen for gRPC ({label}) on {address}")
    server.start()
    return bound


def start(host, tls_port, plaintext_port, certificate_pem, key_pem, validate, proto_dir, extra_services=()):
    """Starts the service on a TLS port and on a plaintext port.

    Each of `extra_services`, `register(server, port_label)`, adds more services to both servers
    before they start. Returns (servers, bound_tls_port, bound_plaintext_port). Raises
    RuntimeError when a port cannot be bound.
    """
    pb, pbg = load_protos(proto_dir)
    options = [
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ("grpc.so_reuseport", 0),  # a fixed port already in use is an error, not a shared port
    ]
    address_host = f"[{host}]" if ":" in host else host
    servers, ports = [], []
    try:
        for label, port in (("tls", tls_port), ("plaintext", plaintext_port)):
            secure = label == "tls"
            server = grpc.server(futures.ThreadPoolExecutor(max_workers=32, thread_name_prefix=f"grpc-{label}"),
                                 options=options)
            service = SandboxTestService(pb, pbg, validate, require_token=secure, port_label=label)
            pbg.add_TestServiceServicer_to_server(service.servicer, server)
            for register in extra_services:
                register(server, label)
            ports.append(listen(server, f"{address_host}:{port}", label, (key_pem, certificate_pem) if secure else None))
            servers.append(server)
    except BaseException:
        for server in servers:
            server.stop(None)
        raise
    return servers, ports[0], ports[1]
