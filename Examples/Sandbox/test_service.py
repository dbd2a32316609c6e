"""grpc.testing.TestService on grpcio: the interop behaviours plus the auth sample's identity echo."""

import hashlib
import logging
import os
import sys
import tempfile
import time
from concurrent import futures

import grpc

TEST_SCOPE = "https://www.googleapis.com/auth/xapi.zoo"
MAX_MESSAGE_BYTES = 8 << 20
MAX_SLEEP_SECONDS = 60.0

log = logging.getLogger("sandbox.grpc")


def load_protos():
    """Compiles Protos/grpc/testing/interop.proto into a temporary directory and imports it.

    The module is generated flat (interop_pb2), not under grpc/testing/, so it cannot shadow the
    grpcio package named grpc.
    """
    from grpc_tools import protoc

    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    proto_dir = os.path.join(root, "Protos", "grpc", "testing")
    out = tempfile.mkdtemp(prefix="sandbox-protos-")
    status = protoc.main([
        "protoc", f"-I{proto_dir}", f"--python_out={out}", f"--grpc_python_out={out}",
        os.path.join(proto_dir, "interop.proto"),
    ])
    if status != 0:
        raise RuntimeError(f"protoc failed ({status}) on {proto_dir}/interop.proto")
    sys.path.insert(0, out)
    import interop_pb2  # noqa: E402
    import interop_pb2_grpc  # noqa: E402
    return interop_pb2, interop_pb2_grpc


def token_fingerprint(token):
    """A short, non-reversible label for logs: never the token itself."""
    return hashlib.sha256(token.encode()).hexdigest()[:8]


def make_servicer(pb, pbg, validate, require_token, port_label):
    """A TestService servicer. `validate(token)` returns {"user", "scope"} or None."""

    codes = {code.value[0]: code for code in grpc.StatusCode}

    class TestService(pbg.TestServiceServicer):
        def _identity(self, context, wants_identity):
            metadata = context.invocation_metadata()
            header = next((value for key, value in metadata if key == "authorization"), None)
            if header is None:
                if require_token or wants_identity:
                    context.set_trailing_metadata([("www-authenticate", 'Bearer realm="sandbox"')])
                    context.abort(grpc.StatusCode.UNAUTHENTICATED, "this call needs an OAuth 2.0 bearer token")
                return None
            scheme, _, token = header.partition(" ")
            identity = validate(token.strip()) if scheme.lower() == "bearer" and token.strip() else None
            if identity is None:
                label = token_fingerprint(token) if token else "-"
                log.info("%s rejected token %s", port_label, label)
                context.set_trailing_metadata([(
                    "www-authenticate",
                    'Bearer realm="sandbox", error="invalid_token", '
                    'error_description="the access token is invalid, expired or revoked"')])
                context.abort(grpc.StatusCode.UNAUTHENTICATED, "invalid or expired access token")
            return identity

        def _knobs(self, context):
            metadata = dict(context.invocation_metadata())
            sleep_ms = metadata.get("x-sandbox-sleep-ms")
            if sleep_ms:
                deadline = time.monotonic() + min(int(sleep_ms) / 1000.0, MAX_SLEEP_SECONDS)
                while time.monotonic() < deadline and context.is_active():
                    time.sleep(min(0.01, max(0.0, deadline - time.monotonic())))
            initial = [(key, value) for key, value in context.invocation_metadata() if key == "x-grpc-test-echo-initial"]
            if initial:
                context.send_initial_metadata(initial)
            trailing = [(key, value) for key, value in context.invocation_metadata() if key == "x-grpc-test-echo-trailing-bin"]
            if metadata.get("x-sandbox-echo-headers") == "1":
                keys = ",".join(key for key, _ in context.invocation_metadata())
                trailing += [
                    ("x-sandbox-received-keys", keys),
                    ("x-sandbox-user-agent", metadata.get("user-agent", "")),
                    ("x-sandbox-peer", context.peer()),
                ]
            if trailing:
                context.set_trailing_metadata(trailing)

        def EmptyCall(self, request, context):
            self._identity(context, wants_identity=False)
            self._knobs(context)
            return pb.Empty()

        def UnaryCall(self, request, context):
            identity = self._identity(context, wants_identity=request.fill_username or request.fill_oauth_scope)
            self._knobs(context)
            if request.response_status.code:
                code = codes.get(request.response_status.code, grpc.StatusCode.UNKNOWN)
                context.abort(code, request.response_status.message)
            if request.response_compressed.value:
                context.set_compression(grpc.Compression.Gzip)
            response = pb.SimpleResponse()
            response.payload.type = pb.COMPRESSABLE
            response.payload.body = bytes(request.response_size)
            if identity and request.fill_username:
                response.username = identity["user"]
            if identity and request.fill_oauth_scope:
                response.oauth_scope = identity["scope"]
            return response

        # UnimplementedCall is deliberately left to the generated base class, which answers
        # UNIMPLEMENTED the way every gRPC server does.

    return TestService()


def start(host, tls_port, plaintext_port, certificate_pem, key_pem, validate):
    """Starts the service on a TLS port and a plaintext port; returns (servers, tls_port, plaintext_port)."""
    pb, pbg = load_protos()
    options = [
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ("grpc.so_reuseport", 0),
    ]
    servers = []
    ports = []
    for secure, port in ((True, tls_port), (False, plaintext_port)):
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=32), options=options)
        label = "tls" if secure else "plaintext"
        pbg.add_TestServiceServicer_to_server(make_servicer(pb, pbg, validate, secure, label), server)
        address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        if secure:
            credentials = grpc.ssl_server_credentials([(key_pem, certificate_pem)])
            bound = server.add_secure_port(address, credentials)
        else:
            bound = server.add_insecure_port(address)
        if bound == 0:
            raise RuntimeError(f"could not bind the {label} gRPC port on {address}")
        server.start()
        servers.append(server)
        ports.append(bound)
    return servers, ports[0], ports[1]
