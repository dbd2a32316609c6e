"""Self-test of the sandbox's gRPC side: starts sandbox.py as a subprocess and calls it with grpcio
(and, where the exact wire shape matters, with a raw HTTP/2 client on h2).

    .venv/bin/python Examples/Sandbox/test_sandbox.py            # or
    .venv/bin/python -m unittest discover -s Examples/Sandbox -p 'test_*.py'
"""

import base64
import datetime
import gzip
import ipaddress
import json
import os
import queue
import shutil
import signal
import socket
import ssl
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

import grpc
import h2.config
import h2.connection
import h2.events
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import test_service  # noqa: E402

SANDBOX = os.path.join(HERE, "sandbox.py")
STATIC_TOKEN = "self-test-static-token-" + os.urandom(6).hex()
WRONG_TOKEN = "self-test-wrong-token-" + os.urandom(6).hex()
SPECIAL_MESSAGE = "\t\ntest with whitespace\r\nand Unicode BMP \u263a and non-BMP \U0001f608\t\n"
SPECIAL_MESSAGE_ON_WIRE = "%09%0Atest with whitespace%0D%0Aand Unicode BMP %E2%98%BA and non-BMP %F0%9F%98%88%09%0A"

pb = pbg = None
_generated_dir = None


def setUpModule():
    global pb, pbg, _generated_dir
    _generated_dir = tempfile.mkdtemp(prefix="sandbox-test-protos-")
    pb, pbg = test_service.load_protos(_generated_dir)


def tearDownModule():
    shutil.rmtree(_generated_dir, ignore_errors=True)


class SandboxProcess:
    """sandbox.py in a subprocess, with stdin held open (--exit-with-stdin) and stderr in a file."""

    def __init__(self, *arguments, exit_with_stdin=True, python_prelude=None):
        self.root = tempfile.mkdtemp(prefix="sandbox-test-")
        self.state_dir = os.path.join(self.root, "state")
        self.log_path = os.path.join(self.root, "sandbox.log")
        command = [SANDBOX, "--state-dir", self.state_dir]
        if exit_with_stdin:
            command.append("--exit-with-stdin")
        command += list(arguments)
        if python_prelude is not None:  # run sandbox.py after some Python of the test's choosing
            command = ["-c", python_prelude, *command]
        self._log = open(self.log_path, "wb")
        self.process = subprocess.Popen(
            [sys.executable, *command], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log)
        self._lines = queue.Queue()
        threading.Thread(target=self._read_stdout, daemon=True).start()
        self.info = None

    def _read_stdout(self):
        for line in self.process.stdout:
            self._lines.put(line.decode("utf-8", "replace").rstrip("\n"))
        self._lines.put(None)

    def wait_ready(self, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"sandbox not ready after {timeout}s:\n{self.log()}") from None
            if line is None:
                raise AssertionError(f"sandbox exited ({self.process.wait()}) before it was ready:\n{self.log()}")
            if line.startswith("SANDBOX READY "):
                with open(line[len("SANDBOX READY "):]) as handle:
                    self.info = json.load(handle)
                self.ready_path = line[len("SANDBOX READY "):]
                return self.info

    def wait_exit(self, timeout):
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"sandbox still running after {timeout}s:\n{self.log()}") from None

    def log(self):
        self._log.flush()
        with open(self.log_path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")

    def close(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass
        self._log.close()
        shutil.rmtree(self.root, ignore_errors=True)


def bearer(token):
    return (("authorization", f"Bearer {token}"),)


def raw_h2c_call(port, path, message, extra_headers=()):
    """One gRPC call over h2c by hand. Returns (header_blocks, body): each block is
    (kind, headers as list of pairs, ended_stream)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        connection = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        connection.initiate_connection()
        stream = connection.get_next_available_stream_id()
        connection.send_headers(stream, [
            (":method", "POST"), (":scheme", "http"), (":path", path), (":authority", f"127.0.0.1:{port}"),
            ("te", "trailers"), ("content-type", "application/grpc"), ("grpc-accept-encoding", "identity,gzip"),
            *extra_headers,
        ])
        connection.send_data(stream, b"\x00" + len(message).to_bytes(4, "big") + message, end_stream=True)
        sock.sendall(connection.data_to_send())
        blocks, body, finished = [], b"", False
        while not finished:
            data = sock.recv(65536)
            if not data:
                break
            for event in connection.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived):
                    blocks.append(("headers", list(event.headers), event.stream_ended is not None))
                elif isinstance(event, h2.events.TrailersReceived):
                    blocks.append(("trailers", list(event.headers), event.stream_ended is not None))
                elif isinstance(event, h2.events.DataReceived):
                    body += event.data
                    connection.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, (h2.events.StreamEnded, h2.events.StreamReset)):
                    finished = True
            sock.sendall(connection.data_to_send())
        return blocks, body


class SandboxServiceTests(unittest.TestCase):
    """One sandbox for the whole class; every test makes its own calls."""

    @classmethod
    def setUpClass(cls):
        cls.sandbox = SandboxProcess("--static-token", STATIC_TOKEN)
        try:
            cls.info = cls.sandbox.wait_ready()
        except BaseException:
            cls.sandbox.close()
            raise
        with open(cls.info["ca_cert"], "rb") as handle:
            cls.ca_pem = handle.read()
        credentials = grpc.ssl_channel_credentials(root_certificates=cls.ca_pem)
        cls.tls_channel = grpc.secure_channel(f"127.0.0.1:{cls.info['grpc_tls_port']}", credentials)
        cls.plaintext_channel = grpc.insecure_channel(f"127.0.0.1:{cls.info['grpc_plaintext_port']}")
        cls.tls = pbg.TestServiceStub(cls.tls_channel)
        cls.plaintext = pbg.TestServiceStub(cls.plaintext_channel)

    @classmethod
    def tearDownClass(cls):
        cls.tls_channel.close()
        cls.plaintext_channel.close()
        cls.sandbox.close()

    def assertRpcError(self, code, function, *arguments, **keywords):
        with self.assertRaises(grpc.RpcError) as caught:
            function(*arguments, **keywords)
        self.assertEqual(caught.exception.code(), code, caught.exception.details())
        return caught.exception

    # -- start-up -------------------------------------------------------------------------------

    def test_ready_document(self):
        info = self.info
        self.assertEqual(info["pid"], self.sandbox.process.pid)
        self.assertEqual(info["host"], "127.0.0.1")
        for key in ("grpc_tls_port", "grpc_plaintext_port"):
            self.assertIsInstance(info[key], int)
            self.assertGreater(info[key], 0)
        self.assertNotEqual(info["grpc_tls_port"], info["grpc_plaintext_port"])
        self.assertEqual(info["ca_cert"], os.path.join(os.path.abspath(self.sandbox.state_dir), "ca.pem"))
        self.assertEqual(info["server_name"], "localhost")
        self.assertEqual(info["server_aliases"], ["alias.sandbox.test"])
        self.assertTrue(info["issuer"].startswith("http://127.0.0.1:"), info["issuer"])
        self.assertEqual(info["user"], "sandbox-user@example.com")
        self.assertEqual(info["scope"], "https://www.googleapis.com/auth/xapi.zoo")
        self.assertEqual(info["static_tokens"], [STATIC_TOKEN])
        self.assertEqual(os.path.basename(self.sandbox.ready_path), "sandbox.json")
        self.assertEqual(stat.S_IMODE(os.stat(self.sandbox.state_dir).st_mode), 0o700)
        self.assertEqual(stat.S_IMODE(os.stat(os.path.join(self.sandbox.state_dir, "server.key")).st_mode), 0o600)
        self.assertEqual(sorted(name for name in os.listdir(self.sandbox.state_dir) if name.endswith(".tmp")), [])

    def test_certificates(self):
        with open(os.path.join(self.sandbox.state_dir, "server.pem"), "rb") as handle:
            server = x509.load_pem_x509_certificate(handle.read())
        ca = x509.load_pem_x509_certificate(self.ca_pem)
        now = datetime.datetime.now(datetime.timezone.utc)
        self.assertEqual(ca.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value, "swift-authrpc sandbox CA")
        self.assertTrue(ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca)
        self.assertTrue(ca.extensions.get_extension_for_class(x509.KeyUsage).value.key_cert_sign)
        self.assertEqual(server.issuer, ca.subject)
        ca.public_key().verify(server.signature, server.tbs_certificate_bytes, ec.ECDSA(server.signature_hash_algorithm))
        names = server.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        self.assertEqual(names.get_values_for_type(x509.DNSName), ["localhost", "alias.sandbox.test"])
        self.assertEqual(set(names.get_values_for_type(x509.IPAddress)),
                         {ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1")})
        self.assertIn(ExtendedKeyUsageOID.SERVER_AUTH, server.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value)
        self.assertFalse(server.extensions.get_extension_for_class(x509.BasicConstraints).value.ca)
        for certificate in (ca, server):
            self.assertLess(certificate.not_valid_before_utc, now)
            self.assertGreater(certificate.not_valid_after_utc, now + datetime.timedelta(days=6))

    def test_tls_by_name_localhost(self):
        credentials = grpc.ssl_channel_credentials(root_certificates=self.ca_pem)
        with grpc.secure_channel(f"localhost:{self.info['grpc_tls_port']}", credentials) as channel:
            pbg.TestServiceStub(channel).EmptyCall(pb.Empty(), metadata=bearer(STATIC_TOKEN), timeout=10)

    # -- interop cases over TLS -----------------------------------------------------------------

    def test_empty_unary(self):
        response, call = self.tls.EmptyCall.with_call(pb.Empty(), metadata=bearer(STATIC_TOKEN), timeout=10)
        self.assertEqual(response, pb.Empty())
        self.assertEqual(call.code(), grpc.StatusCode.OK)

    def test_large_unary(self):
        request = pb.SimpleRequest(response_size=314159, payload=pb.Payload(body=bytes(271828)))
        response = self.tls.UnaryCall(request, metadata=bearer(STATIC_TOKEN), timeout=10)
        self.assertEqual(response.payload.type, pb.COMPRESSABLE)
        self.assertEqual(response.payload.body, bytes(314159))

    def test_status_code_and_message(self):
        request = pb.SimpleRequest(response_status=pb.EchoStatus(code=2, message="test status message"))
        error = self.assertRpcError(grpc.StatusCode.UNKNOWN, self.tls.UnaryCall, request,
                                    metadata=bearer(STATIC_TOKEN), timeout=10)
        self.assertEqual(error.details(), "test status message")
        request.response_status.code = grpc.StatusCode.RESOURCE_EXHAUSTED.value[0]
        self.assertRpcError(grpc.StatusCode.RESOURCE_EXHAUSTED, self.tls.UnaryCall, request,
                            metadata=bearer(STATIC_TOKEN), timeout=10)

    def test_special_status_message(self):
        request = pb.SimpleRequest(response_status=pb.EchoStatus(code=2, message=SPECIAL_MESSAGE))
        error = self.assertRpcError(grpc.StatusCode.UNKNOWN, self.tls.UnaryCall, request,
                                    metadata=bearer(STATIC_TOKEN), timeout=10)
        self.assertEqual(error.details(), SPECIAL_MESSAGE)

    def test_special_status_message_on_the_wire(self):
        request = pb.SimpleRequest(response_status=pb.EchoStatus(code=2, message=SPECIAL_MESSAGE))
        blocks, _ = raw_h2c_call(self.info["grpc_plaintext_port"], "/grpc.testing.TestService/UnaryCall",
                                 request.SerializeToString())
        trailers = dict(blocks[-1][1])
        self.assertEqual(trailers["grpc-status"], "2")
        self.assertEqual(trailers["grpc-message"], SPECIAL_MESSAGE_ON_WIRE)

    def test_unimplemented_method(self):
        self.assertRpcError(grpc.StatusCode.UNIMPLEMENTED, self.tls.UnimplementedCall, pb.Empty(),
                            metadata=bearer(STATIC_TOKEN), timeout=10)

    def test_unimplemented_service(self):
        stub = pbg.UnimplementedServiceStub(self.tls_channel)
        self.assertRpcError(grpc.StatusCode.UNIMPLEMENTED, stub.UnimplementedCall, pb.Empty(),
                            metadata=bearer(STATIC_TOKEN), timeout=10)

    def test_custom_metadata(self):
        metadata = bearer(STATIC_TOKEN) + (
            ("x-grpc-test-echo-initial", "test_initial_metadata_value"),
            ("x-grpc-test-echo-trailing-bin", b"\xab\xab\xab"))
        request = pb.SimpleRequest(response_size=314159, payload=pb.Payload(body=bytes(271828)))
        response, call = self.tls.UnaryCall.with_call(request, metadata=metadata, timeout=10)
        self.assertEqual(len(response.payload.body), 314159)
        self.assertIn(("x-grpc-test-echo-initial", "test_initial_metadata_value"), call.initial_metadata())
        self.assertIn(("x-grpc-test-echo-trailing-bin", b"\xab\xab\xab"), call.trailing_metadata())

        # A failing call still carries the trailing echo.
        request.response_status.code = 2
        request.response_status.message = "fail"
        error = self.assertRpcError(grpc.StatusCode.UNKNOWN, self.tls.UnaryCall, request, metadata=metadata, timeout=10)
        self.assertIn(("x-grpc-test-echo-trailing-bin", b"\xab\xab\xab"), error.trailing_metadata())

    def test_timeout_on_sleeping_server(self):
        metadata = bearer(STATIC_TOKEN) + (("x-sandbox-sleep-ms", "3000"),)
        started = time.monotonic()
        self.assertRpcError(grpc.StatusCode.DEADLINE_EXCEEDED, self.tls.UnaryCall, pb.SimpleRequest(),
                            metadata=metadata, timeout=0.2)
        self.assertLess(time.monotonic() - started, 2.0)

    def test_sleep_knob_delays_the_answer(self):
        metadata = bearer(STATIC_TOKEN) + (("x-sandbox-sleep-ms", "300"),)
        started = time.monotonic()
        self.tls.EmptyCall(pb.Empty(), metadata=metadata, timeout=10)
        self.assertGreaterEqual(time.monotonic() - started, 0.3)
        self.assertRpcError(grpc.StatusCode.INVALID_ARGUMENT, self.tls.EmptyCall, pb.Empty(),
                            metadata=bearer(STATIC_TOKEN) + (("x-sandbox-sleep-ms", "soon"),), timeout=10)

    def test_server_compressed_unary(self):
        request = pb.SimpleRequest(response_size=314159, response_compressed=pb.BoolValue(value=True))
        response = self.tls.UnaryCall(request, metadata=bearer(STATIC_TOKEN), timeout=10)
        self.assertEqual(response.payload.body, bytes(314159))
        # On the wire: grpc-encoding gzip and a message with the compressed flag set.
        blocks, body = raw_h2c_call(self.info["grpc_plaintext_port"], "/grpc.testing.TestService/UnaryCall",
                                    request.SerializeToString())
        self.assertEqual(dict(blocks[0][1]).get("grpc-encoding"), "gzip")
        self.assertEqual(body[0], 1)
        self.assertEqual(int.from_bytes(body[1:5], "big"), len(body) - 5)
        self.assertEqual(pb.SimpleResponse.FromString(gzip.decompress(body[5:])).payload.body, bytes(314159))

    def test_client_compressed_unary(self):
        request = pb.SimpleRequest(response_size=314159, payload=pb.Payload(body=bytes(271828)),
                                   expect_compressed=pb.BoolValue(value=True))
        response = self.tls.UnaryCall(request, metadata=bearer(STATIC_TOKEN), timeout=10,
                                      compression=grpc.Compression.Gzip)
        self.assertEqual(len(response.payload.body), 314159)

    # -- auth -------------------------------------------------------------------------------------

    def test_oauth2_auth_token_identity(self):
        request = pb.SimpleRequest(fill_username=True, fill_oauth_scope=True)
        for scheme in ("Bearer", "bearer", "BEARER"):
            metadata = (("authorization", f"{scheme} {STATIC_TOKEN}"),)
            response = self.tls.UnaryCall(request, metadata=metadata, timeout=10)
            self.assertEqual(response.username, "sandbox-user@example.com")
            self.assertEqual(response.oauth_scope, "https://www.googleapis.com/auth/xapi.zoo")

    def test_access_token_call_credentials(self):
        credentials = grpc.composite_channel_credentials(
            grpc.ssl_channel_credentials(root_certificates=self.ca_pem),
            grpc.access_token_call_credentials(STATIC_TOKEN))
        with grpc.secure_channel(f"127.0.0.1:{self.info['grpc_tls_port']}", credentials) as channel:
            response = pbg.TestServiceStub(channel).UnaryCall(pb.SimpleRequest(fill_username=True), timeout=10)
        self.assertEqual(response.username, "sandbox-user@example.com")

    def test_missing_token_over_tls(self):
        for method, request in ((self.tls.EmptyCall, pb.Empty()), (self.tls.UnaryCall, pb.SimpleRequest())):
            error = self.assertRpcError(grpc.StatusCode.UNAUTHENTICATED, method, request, timeout=10)
            self.assertIn(("www-authenticate", 'Bearer realm="sandbox"'), error.trailing_metadata())

    def test_wrong_token(self):
        error = self.assertRpcError(grpc.StatusCode.UNAUTHENTICATED, self.tls.UnaryCall,
                                    pb.SimpleRequest(fill_username=True), metadata=bearer(WRONG_TOKEN), timeout=10)
        self.assertEqual(error.details(), "invalid or expired access token")
        challenge = dict(error.trailing_metadata())["www-authenticate"]
        self.assertTrue(challenge.startswith('Bearer realm="sandbox", error="invalid_token", error_description="'),
                        challenge)
        self.assertNotIn(WRONG_TOKEN, self.sandbox.log())

    def test_malformed_authorization(self):
        for value in ("Basic dXNlcjpwYXNz", "Bearer", "Bearer    ", STATIC_TOKEN):
            error = self.assertRpcError(grpc.StatusCode.UNAUTHENTICATED, self.tls.EmptyCall, pb.Empty(),
                                        metadata=(("authorization", value),), timeout=10)
            self.assertIn('error="invalid_token"', dict(error.trailing_metadata())["www-authenticate"])

    def test_unauthenticated_is_trailers_only(self):
        blocks, body = raw_h2c_call(self.info["grpc_plaintext_port"], "/grpc.testing.TestService/UnaryCall",
                                    pb.SimpleRequest(fill_username=True).SerializeToString(),
                                    [("authorization", f"Bearer {WRONG_TOKEN}")])
        self.assertEqual(len(blocks), 1, blocks)
        kind, headers, ended = blocks[0]
        self.assertTrue(ended)
        self.assertEqual(body, b"")
        headers = dict(headers)
        self.assertEqual(headers[":status"], "200")
        self.assertEqual(headers["grpc-status"], "16")
        self.assertIn("invalid_token", headers["www-authenticate"])

    def test_plaintext_allows_anonymous_calls_without_identity(self):
        self.plaintext.EmptyCall(pb.Empty(), timeout=10)
        response = self.plaintext.UnaryCall(pb.SimpleRequest(response_size=10), timeout=10)
        self.assertEqual(response.payload.body, bytes(10))
        for request in (pb.SimpleRequest(fill_username=True), pb.SimpleRequest(fill_oauth_scope=True)):
            error = self.assertRpcError(grpc.StatusCode.UNAUTHENTICATED, self.plaintext.UnaryCall, request, timeout=10)
            self.assertIn(("www-authenticate", 'Bearer realm="sandbox"'), error.trailing_metadata())
        response = self.plaintext.UnaryCall(pb.SimpleRequest(fill_username=True, fill_oauth_scope=True),
                                            metadata=bearer(STATIC_TOKEN), timeout=10)
        self.assertEqual(response.username, "sandbox-user@example.com")
        self.assertRpcError(grpc.StatusCode.UNAUTHENTICATED, self.plaintext.EmptyCall, pb.Empty(),
                            metadata=bearer(WRONG_TOKEN), timeout=10)

    def test_issuer_token(self):
        scope = self.info["scope"]
        try:
            with urllib.request.urlopen(self.info["issuer"] + "/.well-known/openid-configuration", timeout=10) as reply:
                token_endpoint = json.load(reply)["token_endpoint"]
            form = urllib.parse.urlencode({
                "grant_type": "client_credentials", "scope": scope,
                "client_id": "sandbox-service", "client_secret": "sandbox-service-secret"}).encode()
            with urllib.request.urlopen(token_endpoint, data=form, timeout=10) as reply:
                token = json.load(reply)["access_token"]
        except Exception as error:  # the issuer's clients belong to issuer.py; do not fail on them here
            self.skipTest(f"no client-credentials token from the issuer: {error}")
        response = self.tls.UnaryCall(pb.SimpleRequest(fill_username=True, fill_oauth_scope=True),
                                      metadata=bearer(token), timeout=10)
        self.assertTrue(response.username)
        self.assertEqual(response.oauth_scope, scope)
        self.assertNotIn(token, self.sandbox.log())

    # -- the request-header echo knob -------------------------------------------------------------

    def test_echo_headers_knob(self):
        metadata = bearer(STATIC_TOKEN) + (("x-sandbox-echo-headers", "1"), ("x-custom", "value"))
        credentials = grpc.ssl_channel_credentials(root_certificates=self.ca_pem)
        with grpc.secure_channel(f"127.0.0.1:{self.info['grpc_tls_port']}", credentials,
                                 options=[("grpc.primary_user_agent", "self-test/1.0")]) as channel:
            _, call = pbg.TestServiceStub(channel).EmptyCall.with_call(pb.Empty(), metadata=metadata, timeout=10)
        trailing = dict(call.trailing_metadata())
        keys = trailing["x-sandbox-received-keys"].split(",")
        for key in ("authorization", "x-sandbox-echo-headers", "x-custom", "user-agent"):
            self.assertIn(key, keys)
        self.assertTrue(trailing["x-sandbox-user-agent"].startswith("self-test/1.0 grpc-python/"),
                        trailing["x-sandbox-user-agent"])
        self.assertTrue(trailing["x-sandbox-peer"].startswith("ipv4:127.0.0.1:"), trailing["x-sandbox-peer"])
        for value in trailing.values():
            self.assertNotIn(STATIC_TOKEN, str(value))

    def test_no_token_in_log(self):
        self.tls.EmptyCall(pb.Empty(), metadata=bearer(STATIC_TOKEN), timeout=10)
        log = self.sandbox.log()
        self.assertIn("EmptyCall", log)
        self.assertNotIn(STATIC_TOKEN, log)


class SandboxHostileTextTests(unittest.TestCase):
    """--hostile-text: what the issuer says to a client's user carries terminal escape sequences."""

    def post(self, path, form):
        request = urllib.request.Request(self.info["issuer"] + path, data=urllib.parse.urlencode(form).encode())
        try:
            with urllib.request.urlopen(request, timeout=10) as reply:
                return reply.status, json.load(reply)
        except urllib.error.HTTPError as error:
            return error.code, json.load(error)

    def test_user_code_uri_email_and_error_description(self):
        from issuer import HOSTILE_TEXT
        sandbox = SandboxProcess("--hostile-text", "--auto-approve-device-after", "0")
        self.addCleanup(sandbox.close)
        self.info = sandbox.wait_ready()

        status, device = self.post("/device_authorization", {"client_id": "sandbox-cli", "scope": "openid email"})
        self.assertEqual(status, 200, device)
        self.assertTrue(device["user_code"].endswith(HOSTILE_TEXT), device)
        self.assertEqual(device["verification_uri"], self.info["issuer"] + "/device" + HOSTILE_TEXT)

        status, token = self.post("/token", {"grant_type": "urn:ietf:params:oauth:grant-type:device_code",
                                             "device_code": device["device_code"], "client_id": "sandbox-cli"})
        self.assertEqual(status, 200, token)
        payload = token["id_token"].split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        self.assertEqual(claims["email"], "sandbox-user@example.com" + HOSTILE_TEXT)

        status, error = self.post("/token", {"grant_type": "refresh_token", "refresh_token": "no-such-token",
                                             "client_id": "sandbox-cli"})
        self.assertEqual((status, error["error"]), (400, "invalid_grant"), error)
        self.assertEqual(error["error_description"], HOSTILE_TEXT)


class SandboxIssuerTLSTests(unittest.TestCase):
    """--issuer-tls and --public-name: the issuer over https with the sandbox's CA, under a public name."""

    def test_issuer_over_https_under_a_public_name(self):
        sandbox = SandboxProcess("--issuer-tls", "--public-name", "sandbox.corp.example")
        self.addCleanup(sandbox.close)
        info = sandbox.wait_ready()
        port = int(info["issuer"].rsplit(":", 1)[1])
        self.assertEqual(info["issuer"], f"https://sandbox.corp.example:{port}")
        context = ssl.create_default_context(cafile=info["ca_cert"])
        # The name is not resolvable here: connect to the address, verify the certificate for the name.
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            with context.wrap_socket(raw, server_hostname="sandbox.corp.example") as tls:
                tls.sendall(b"GET /.well-known/openid-configuration HTTP/1.1\r\nHost: sandbox.corp.example\r\n"
                            b"Connection: close\r\n\r\n")
                data = b""
                while chunk := tls.recv(65536):
                    data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        self.assertTrue(head.startswith(b"HTTP/1.1 200"), head)
        document = json.loads(body)
        self.assertEqual(document["issuer"], info["issuer"])
        self.assertEqual(document["token_endpoint"], info["issuer"] + "/token")
        # Without the sandbox's CA the certificate is not trusted.
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            with self.assertRaises(ssl.SSLCertVerificationError):
                ssl.create_default_context().wrap_socket(raw, server_hostname="sandbox.corp.example")

    def test_public_name_must_be_a_dns_name(self):
        sandbox = SandboxProcess("--public-name", "Not A Name")
        self.addCleanup(sandbox.close)
        self.assertEqual(sandbox.wait_exit(30), 2)
        self.assertIn("--public-name", sandbox.log())


class SandboxLifecycleTests(unittest.TestCase):
    def run_sandbox(self, *arguments, **keywords):
        sandbox = SandboxProcess(*arguments, **keywords)
        self.addCleanup(sandbox.close)
        return sandbox

    def test_stdin_eof_ends_the_sandbox(self):
        sandbox = self.run_sandbox()
        info = sandbox.wait_ready()
        sandbox.process.stdin.close()
        self.assertEqual(sandbox.wait_exit(10), 0, sandbox.log())
        for port in (info["grpc_tls_port"], info["grpc_plaintext_port"]):
            with self.assertRaises(ConnectionRefusedError):
                socket.create_connection(("127.0.0.1", port), timeout=2).close()

    def test_sigterm_stops_cleanly(self):
        sandbox = self.run_sandbox(exit_with_stdin=False)
        sandbox.wait_ready()
        sandbox.process.send_signal(signal.SIGTERM)
        self.assertEqual(sandbox.wait_exit(10), 0, sandbox.log())

    def test_port_in_use_is_a_clear_error(self):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            sandbox = self.run_sandbox("--tls-port", str(taken.getsockname()[1]))
            self.assertEqual(sandbox.wait_exit(30), 1)
        self.assertIn("cannot listen for gRPC (tls)", sandbox.log())
        self.assertFalse(os.path.exists(os.path.join(sandbox.state_dir, "sandbox.json")))

    def test_non_loopback_host_is_refused(self):
        sandbox = self.run_sandbox("--host", "0.0.0.0")
        self.assertEqual(sandbox.wait_exit(30), 2)
        self.assertIn("not a loopback address", sandbox.log())

    def test_tls_names_join_the_certificate_and_bad_ones_are_refused(self):
        sandbox = self.run_sandbox("--tls-name", "pubsub.googleapis.com", "--tls-name", "a-b.example.test")
        info = sandbox.wait_ready()
        with open(os.path.join(sandbox.state_dir, "server.pem"), "rb") as handle:
            server = x509.load_pem_x509_certificate(handle.read())
        names = server.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        self.assertEqual(names.get_values_for_type(x509.DNSName), ["localhost", "alias.sandbox.test", "pubsub.googleapis.com", "a-b.example.test"])
        self.assertIn("https://pubsub.googleapis.com/", info["jwt_audiences"])
        for bad in ("-x.example", "under_score.example", "single", "a..b"):
            refused = self.run_sandbox(f"--tls-name={bad}")
            self.assertEqual(refused.wait_exit(30), 2, bad)
            self.assertIn("is not a DNS name", refused.log())

    def test_missing_issuer_is_a_clear_error(self):
        prelude = ("import runpy, sys; sys.modules['issuer'] = None; sys.path.insert(0, %r); "
                   "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')" % HERE)
        sandbox = self.run_sandbox(python_prelude=prelude)
        self.assertEqual(sandbox.wait_exit(30), 1)
        self.assertIn("cannot load the OAuth issuer", sandbox.log())


if __name__ == "__main__":
    unittest.main(verbosity=2)
