"""Self-test of the interop server (interop_service.py) with grpcio as the client: a sandbox
started with --interop, and the server rules interop_client's cases rely on.

    .venv/bin/python -m unittest discover -s Examples/Sandbox -p 'test_interop_service.py'
"""

import gzip
import os
import shutil
import sys
import tempfile
import unittest
import zlib

import grpc

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import interop_service  # noqa: E402
import test_service  # noqa: E402
from test_sandbox import SandboxProcess  # noqa: E402

STATIC_TOKEN = "interop-self-test-token-" + os.urandom(6).hex()


class UnwrapRequestTests(unittest.TestCase):
    """How the server tells a compressed request from a plain one, on bytes."""

    def test_plain_gzip_and_zlib(self):
        message = b"\x10\x0a\x1a\x04\x12\x02\x00\x00"  # response_size 10, a 2-byte payload
        self.assertEqual(interop_service.unwrap_request(message), (message, False))
        self.assertEqual(interop_service.unwrap_request(gzip.compress(message)), (message, True))
        self.assertEqual(interop_service.unwrap_request(zlib.compress(message)), (message, True))
        self.assertEqual(interop_service.unwrap_request(b""), (b"", False))

    def test_broken_gzip_is_refused(self):
        with self.assertRaises(interop_service.RequestError):
            interop_service.unwrap_request(gzip.compress(b"\x10\x0a" * 100)[:-6])
        with self.assertRaises(interop_service.RequestError):
            interop_service.unwrap_request(gzip.compress(b"\x10\x0a") + b"extra")

    def test_decompression_is_bounded(self):
        with self.assertRaises(interop_service.RequestError):
            interop_service.unwrap_request(gzip.compress(bytes(interop_service.MAX_MESSAGE_BYTES + 1)))


class InteropServerTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.generated = tempfile.mkdtemp(prefix="interop-test-protos-")
        cls.pb, cls.pbg = test_service.load_protos(cls.generated)
        cls.sandbox = SandboxProcess("--interop", "--static-token", STATIC_TOKEN)
        cls.info = cls.sandbox.wait_ready()
        cls.channel = grpc.insecure_channel(f"127.0.0.1:{cls.info['interop_plaintext_port']}")
        cls.stub = cls.pbg.TestServiceStub(cls.channel)

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()
        cls.sandbox.close()
        shutil.rmtree(cls.generated, ignore_errors=True)

    def request(self, expect_compressed=None, **fields):
        request = self.pb.SimpleRequest(response_size=314159, payload=self.pb.Payload(body=bytes(271828)), **fields)
        if expect_compressed is not None:
            request.expect_compressed.value = expect_compressed
        return request

    def assertFails(self, code, call, *arguments, **options):
        with self.assertRaises(grpc.RpcError) as raised:
            call(*arguments, **options)
        self.assertEqual(raised.exception.code(), code, raised.exception.details())
        return raised.exception

    def test_compressed_request_rules(self):
        failure = self.assertFails(grpc.StatusCode.INVALID_ARGUMENT, self.stub.UnaryCall, self.request(True))
        self.assertIn("expected a compressed request", failure.details())
        for algorithm in (grpc.Compression.Gzip, grpc.Compression.Deflate):
            response = self.stub.UnaryCall(self.request(True), compression=algorithm)
            self.assertEqual(response.payload.body, bytes(314159))
        self.stub.UnaryCall(self.request(False))
        self.assertFails(grpc.StatusCode.INVALID_ARGUMENT, self.stub.UnaryCall, self.request(False),
                         compression=grpc.Compression.Gzip)
        # The fault knob lets the uncompressed probe through.
        self.stub.UnaryCall(self.request(True), metadata=[(interop_service.FAULT_KEY, "ignore-expect-compressed")])

    def test_echoes_and_status(self):
        response, call = self.stub.UnaryCall.with_call(
            self.request(), metadata=[("x-grpc-test-echo-initial", "test_initial_metadata_value"),
                                      ("x-grpc-test-echo-trailing-bin", b"\xab\xab\xab")])
        self.assertIn(("x-grpc-test-echo-initial", "test_initial_metadata_value"), call.initial_metadata())
        self.assertIn(("x-grpc-test-echo-trailing-bin", b"\xab\xab\xab"), call.trailing_metadata())
        message = "\t\ntest with whitespace\r\nand Unicode BMP \u263a and non-BMP \U0001f608\t\n"
        failure = self.assertFails(grpc.StatusCode.UNKNOWN, self.stub.UnaryCall,
                                   self.pb.SimpleRequest(response_status=self.pb.EchoStatus(code=2, message=message)))
        self.assertEqual(failure.details(), message)

    def test_identity_needs_a_valid_token(self):
        self.assertFails(grpc.StatusCode.UNAUTHENTICATED, self.stub.UnaryCall,
                         self.pb.SimpleRequest(fill_username=True))
        self.assertFails(grpc.StatusCode.UNAUTHENTICATED, self.stub.EmptyCall, self.pb.Empty(),
                         metadata=[("authorization", "Bearer not-a-token")])
        response = self.stub.UnaryCall(self.pb.SimpleRequest(fill_username=True, fill_oauth_scope=True),
                                       metadata=[("authorization", f"Bearer {STATIC_TOKEN}")])
        self.assertEqual((response.username, response.oauth_scope), (self.info["user"], self.info["scope"]))

    def test_server_id_and_unimplemented(self):
        ids = {self.stub.UnaryCall(self.pb.SimpleRequest(fill_server_id=True)).server_id for _ in range(3)}
        self.assertEqual(ids, {self.info["interop_server_id"]})
        self.assertFails(grpc.StatusCode.UNIMPLEMENTED, self.stub.UnimplementedCall, self.pb.Empty())
        other = self.pbg.UnimplementedServiceStub(self.channel)
        self.assertFails(grpc.StatusCode.UNIMPLEMENTED, other.UnimplementedCall, self.pb.Empty())
        other.UnimplementedCall(self.pb.Empty(), metadata=[(interop_service.FAULT_KEY, "implemented-unimplemented")])

    def test_unknown_fault_is_refused(self):
        failure = self.assertFails(grpc.StatusCode.INVALID_ARGUMENT, self.stub.EmptyCall, self.pb.Empty(),
                                   metadata=[(interop_service.FAULT_KEY, "no-such-fault")])
        self.assertIn("no-such-fault", failure.details())

    def test_tls_port_serves_anonymous_calls(self):
        with open(self.info["ca_cert"], "rb") as handle:
            credentials = grpc.ssl_channel_credentials(handle.read())
        with grpc.secure_channel(f"127.0.0.1:{self.info['interop_tls_port']}", credentials,
                                 options=[("grpc.ssl_target_name_override", "localhost")]) as channel:
            self.pbg.TestServiceStub(channel).EmptyCall(self.pb.Empty())


if __name__ == "__main__":
    unittest.main()
