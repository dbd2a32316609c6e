"""gRPC's interop server, unary half (doc/interop-test-descriptions.md, "Server"), on grpcio.

The server features interop_client's unary and auth cases need: EmptyCall; UnaryCall with
CompressedRequest (`expect_compressed`: an uncompressed request that expected compression, or a
compressed one that did not, fails INVALID_ARGUMENT), CompressedResponse (`response_compressed`),
Echo Status, Echo Metadata, Echo Authenticated Username and Echo OAuth Scope, and `fill_server_id`;
UnimplementedCall answers UNIMPLEMENTED and UnimplementedService is not served.

Unlike the sandbox's own TestService, a call needs no token: as on any interop server, the
non-auth cases run anonymously. A token that is present must be valid (checked by the sandbox's
validator, as on its TestService), and `fill_username` / `fill_oauth_scope` need one.

grpcio does not tell a handler whether a request arrived compressed, so the server runs with
C-core's per-message decompression off (`grpc.per_message_decompression`) and reads the request
bytes as they came: a gzip member (its magic 1f 8b cannot start a protobuf message, whose first
byte's wire type would be 7) or a zlib stream (checked header, decompressed to its end), else a
plain message.

`x-sandbox-fault: NAME` in the request metadata makes the server break one rule on purpose (see
FAULTS), so a test can show that the client's case fails when a server gets it wrong.
"""

import logging
import os
import re
import socket
import threading
import zlib
from concurrent import futures

import grpc

import test_service

FAULT_KEY = "x-sandbox-fault"
#: `x-sandbox-record-peer: NAME` appends the call's peer (its connection) to
#: `<state dir>/interop-peers-NAME.txt`, so a test can count the connections a client used.
RECORD_PEER_KEY = "x-sandbox-record-peer"
#: What each fault knob makes the server do wrong.
FAULTS = {
    "ignore-expect-compressed": "accept an uncompressed request that expected compression",
    "uncompressed-response": "send the response uncompressed although response_compressed asked for compression",
    "compressed-response": "compress every response, also when response_compressed is false",
    "short-payload": "send one byte less than response_size",
    "nonzero-payload": "fill the response payload with 0x01 bytes instead of zeros",
    "no-echo": "echo neither x-grpc-test-echo-initial nor x-grpc-test-echo-trailing-bin",
    "altered-echo": "echo both metadata values with their last byte changed",
    "status-code-internal": "answer a requested status with INTERNAL instead of its code",
    "status-message-stripped": "answer a requested status with its message stripped of surrounding whitespace",
    "implemented-unimplemented": "answer UnimplementedCall (of both services) with OK",
    "server-id-per-call": "report a new server_id on every call",
    "nonempty-empty": "answer EmptyCall with a message that is not empty",
    "username-other": "report another username than the token's",
    "scope-other": "report another OAuth scope than the token's",
}

MAX_MESSAGE_BYTES = test_service.MAX_MESSAGE_BYTES
TEST_SERVICE = "grpc.testing.TestService"
UNIMPLEMENTED_SERVICE = "grpc.testing.UnimplementedService"
OTHER_USER = "someone-else@example.com"
OTHER_SCOPE = "https://www.googleapis.com/auth/someone-elses-scope"

log = logging.getLogger("sandbox.interop")


class RequestError(Exception):
    """The request bytes are neither a message nor a compressed one; the text says why."""


def unwrap_request(raw):
    """(message bytes, whether they arrived compressed) from a request as it came off the wire."""
    if raw[:2] == b"\x1f\x8b":
        return _inflate(raw, wbits=16 + zlib.MAX_WBITS, name="gzip"), True
    # A zlib stream: deflate method, a header whose check bits make it a multiple of 31.
    if len(raw) >= 2 and raw[0] & 0x0F == 8 and ((raw[0] << 8) | raw[1]) % 31 == 0:
        try:
            return _inflate(raw, wbits=zlib.MAX_WBITS, name="deflate"), True
        except RequestError:
            pass  # not a zlib stream after all: a plain message that starts like one
    return raw, False


def _inflate(raw, wbits, name):
    inflater = zlib.decompressobj(wbits)
    try:
        message = inflater.decompress(raw, MAX_MESSAGE_BYTES + 1)
    except zlib.error as error:
        raise RequestError(f"the {name} request does not decompress: {error}") from None
    if len(message) > MAX_MESSAGE_BYTES:
        raise RequestError(f"the decompressed request is larger than {MAX_MESSAGE_BYTES} bytes")
    if not inflater.eof or inflater.unused_data:
        raise RequestError(f"the {name} request is cut short or has bytes after its end")
    return message


class InteropService:
    """The handlers of one port; `validate(token)` is the sandbox's token check."""

    def __init__(self, pb, validate, port_label, server_id, state_dir=None):
        self.pb = pb
        self.validate = validate
        self.port_label = port_label
        self.server_id = server_id
        self.state_dir = state_dir
        self._records = threading.Lock()

    # -- what every method does first -----------------------------------------------------------

    @staticmethod
    def _fault(call):
        name = call.first(FAULT_KEY)
        if name is not None and name not in FAULTS:
            call.fail(grpc.StatusCode.INVALID_ARGUMENT, f"unknown {FAULT_KEY} {name!r}; known: {', '.join(FAULTS)}")
        return name

    @staticmethod
    def _altered(value):
        if isinstance(value, bytes):
            return value[:-1] + bytes([value[-1] ^ 0xFF]) if value else b"\xff"
        return value[:-1] + ("X" if not value.endswith("X") else "Y")

    def _record_peer(self, call):
        name = call.first(RECORD_PEER_KEY)
        if name is None:
            return
        if self.state_dir is None or not re.fullmatch(r"[A-Za-z0-9-]{1,64}", name):
            call.fail(grpc.StatusCode.INVALID_ARGUMENT, f"{RECORD_PEER_KEY} must be 1-64 letters, digits or '-'")
        with self._records, open(os.path.join(self.state_dir, f"interop-peers-{name}.txt"), "a") as handle:
            handle.write(call.peer + "\n")

    def _begin(self, call, fault, wants_identity=False):
        """Peer record, sleep knob, trailing echo, token check, initial echo; returns the identity (or None)."""
        self._record_peer(call)
        test_service.sleep_if_asked(call)
        echo = fault != "no-echo"
        change = self._altered if fault == "altered-echo" else (lambda value: value)
        if echo:
            call.trailing += [(test_service.ECHO_TRAILING_KEY, change(value))
                              for value in call.values(test_service.ECHO_TRAILING_KEY)]
        identity = test_service.authenticate(call, self.validate, require_token=False, wants_identity=wants_identity)
        initial = [(test_service.ECHO_INITIAL_KEY, change(value))
                   for value in call.values(test_service.ECHO_INITIAL_KEY)]
        if echo and initial:
            call.context.send_initial_metadata(initial)
        return identity

    def _parse(self, call, raw, message_type):
        try:
            body, compressed = unwrap_request(raw)
        except RequestError as error:
            call.fail(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        request = message_type()
        try:
            request.ParseFromString(body)
        except Exception as error:  # protobuf's DecodeError
            call.fail(grpc.StatusCode.INVALID_ARGUMENT, f"the request is not a {message_type.DESCRIPTOR.name}: {error}")
        return request, compressed

    # -- the methods -----------------------------------------------------------------------------

    @test_service._rpc
    def EmptyCall(self, raw, call):
        fault = self._fault(call)
        self._begin(call, fault)
        self._parse(call, raw, self.pb.Empty)
        if fault == "nonempty-empty":
            return b"\x08\x01"  # field 1 (varint) = 1: unknown to Empty, so not an empty message
        return b""

    @test_service._rpc
    def UnaryCall(self, raw, call):
        fault = self._fault(call)
        request, compressed = self._parse(call, raw, self.pb.SimpleRequest)
        identity = self._begin(call, fault, wants_identity=request.fill_username or request.fill_oauth_scope)
        if request.HasField("expect_compressed"):
            if request.expect_compressed.value and not compressed and fault != "ignore-expect-compressed":
                call.fail(grpc.StatusCode.INVALID_ARGUMENT,
                          "expected a compressed request (expect_compressed is true), got an uncompressed one")
            if not request.expect_compressed.value and compressed:
                call.fail(grpc.StatusCode.INVALID_ARGUMENT,
                          "got a compressed request, though expect_compressed is false")
        status = request.response_status
        if status.code != 0:
            code = test_service._STATUS_CODES.get(status.code, grpc.StatusCode.UNKNOWN)
            if fault == "status-code-internal":
                code = grpc.StatusCode.INTERNAL
            call.fail(code, status.message.strip() if fault == "status-message-stripped" else status.message)
        if request.response_type != self.pb.COMPRESSABLE:
            call.fail(grpc.StatusCode.INVALID_ARGUMENT, f"unsupported response_type {request.response_type}")
        if not 0 <= request.response_size <= test_service.MAX_RESPONSE_PAYLOAD_BYTES:
            call.fail(grpc.StatusCode.INVALID_ARGUMENT,
                      f"response_size must be between 0 and {test_service.MAX_RESPONSE_PAYLOAD_BYTES}")
        wants_compression = request.response_compressed.value and fault != "uncompressed-response"
        if wants_compression or fault == "compressed-response":
            call.context.set_compression(grpc.Compression.Gzip)
        response = self.pb.SimpleResponse()
        response.payload.type = self.pb.COMPRESSABLE
        size = request.response_size - 1 if fault == "short-payload" and request.response_size > 0 else request.response_size
        response.payload.body = (b"\x01" if fault == "nonzero-payload" else b"\x00") * size
        if request.fill_username:
            response.username = OTHER_USER if fault == "username-other" else identity.get("user") or ""
        if request.fill_oauth_scope:
            response.oauth_scope = OTHER_SCOPE if fault == "scope-other" else identity.get("scope") or ""
        if request.fill_server_id:
            response.server_id = os.urandom(8).hex() if fault == "server-id-per-call" else self.server_id
            response.hostname = socket.gethostname()
        return response.SerializeToString()

    @test_service._rpc
    def UnimplementedCall(self, raw, call):
        if self._fault(call) != "implemented-unimplemented":
            # What an unregistered method answers; like one, it needs no credentials.
            call.fail(grpc.StatusCode.UNIMPLEMENTED, "Method not found!")
        return b""

    def handler(self):
        """A generic handler: request and response bytes pass through untouched."""
        service = self
        methods = {
            f"/{TEST_SERVICE}/EmptyCall": self.EmptyCall,
            f"/{TEST_SERVICE}/UnaryCall": self.UnaryCall,
            f"/{TEST_SERVICE}/UnimplementedCall": self.UnimplementedCall,
        }

        class Handler(grpc.GenericRpcHandler):
            def service(self, details):
                method = methods.get(details.method)
                if method is None and details.method == f"/{UNIMPLEMENTED_SERVICE}/UnimplementedCall":
                    # Served only to break the rule on purpose; otherwise the service is unknown.
                    metadata = dict(details.invocation_metadata or ())
                    if metadata.get(FAULT_KEY) == "implemented-unimplemented":
                        method = service.UnimplementedCall
                if method is None:
                    return None
                return grpc.unary_unary_rpc_method_handler(method)

        return Handler()


def start(host, tls_port, plaintext_port, certificate_pem, key_pem, validate, proto_dir, state_dir=None):
    """Serves the interop service on a TLS port and a plaintext port.

    Returns (servers, bound TLS port, bound plaintext port, server_id). Raises RuntimeError when a
    port cannot be bound. Peer records (RECORD_PEER_KEY) go to `state_dir`.
    """
    pb, _ = test_service.load_protos(proto_dir)
    server_id = "sandbox-interop-" + os.urandom(4).hex()
    options = [
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ("grpc.so_reuseport", 0),
        # Requests reach the handler as they came, so it can tell whether they were compressed.
        ("grpc.per_message_decompression", 0),
    ]
    address_host = f"[{host}]" if ":" in host else host
    servers, ports = [], []
    try:
        for label, port in (("interop-tls", tls_port), ("interop-plaintext", plaintext_port)):
            server = grpc.server(futures.ThreadPoolExecutor(max_workers=16, thread_name_prefix=f"grpc-{label}"),
                                 options=options)
            server.add_generic_rpc_handlers([InteropService(pb, validate, label, server_id, state_dir).handler()])
            key_pair = (key_pem, certificate_pem) if label == "interop-tls" else None
            ports.append(test_service.listen(server, f"{address_host}:{port}", label, key_pair))
            servers.append(server)
    except BaseException:
        for server in servers:
            server.stop(None)
        raise
    return servers, ports[0], ports[1], server_id
