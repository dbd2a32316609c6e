"""Self-test for h2_fault_server.py: starts it, talks to it with an h2 client over real sockets.

Run: .venv/bin/python -m unittest Tests/Peers/test_h2_fault_server.py -v   (from the package root)
"""

import base64
import datetime
import ipaddress
import gzip
import json
import os
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "h2_fault_server.py")


def grpc_frame(message):
    return b"\x00" + len(message).to_bytes(4, "big") + message


def make_certificate(directory):
    """A throwaway self-signed certificate for localhost / 127.0.0.1."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)

    certificate = (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([
            x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path = os.path.join(directory, "cert.pem")
    key_path = os.path.join(directory, "key.pem")
    with open(cert_path, "wb") as handle:
        handle.write(certificate.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as handle:
        handle.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    return cert_path, key_path


class Client:
    """A small blocking HTTP/2 client on h2 that records every event it sees."""

    def __init__(self, port, tls_context=None, unix_address=None):
        if unix_address is not None:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(10)
            sock.connect(unix_address)
        else:
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        if tls_context is not None:
            sock = tls_context.wrap_socket(sock, server_hostname="localhost")
        self.sock = sock
        self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        self.h2.initiate_connection()
        self.h2.increment_flow_control_window(16 << 20)
        self.events = []
        self.frames = []  # (type, flags, stream id, payload length) of every frame received
        self.goaways = []  # (last_stream_id, error_code) of every GOAWAY received
        self.buffer = b""
        self.closed = False
        self.flush()

    def flush(self):
        data = self.h2.data_to_send()
        if data:
            self.sock.sendall(data)

    def request(self, scenario, headers=(), message=b"hello", end=True):
        stream_id = self.h2.get_next_available_stream_id()
        fields = [(":method", "POST"), (":scheme", "http"), (":path", f"/fault.Fault/{scenario}"),
                  (":authority", "faults.test"), ("content-type", "application/grpc"), ("te", "trailers"),
                  *headers]
        self.h2.send_headers(stream_id, fields)
        if message is not None:
            self.h2.send_data(stream_id, grpc_frame(message), end_stream=end)
        elif end:
            self.h2.end_stream(stream_id)
        self.flush()
        return stream_id

    def pump(self, until, timeout=10):
        deadline = time.monotonic() + timeout
        while not until():
            if self.closed:
                raise AssertionError("connection closed before the condition held")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError("timed out waiting for the server")
            self.sock.settimeout(remaining)
            try:
                data = self.sock.recv(1 << 16)
            except socket.timeout:
                continue
            except OSError:
                data = b""
            if not data:
                self.closed = True
                continue
            self.buffer += data
            while len(self.buffer) >= 9:
                length = int.from_bytes(self.buffer[:3], "big")
                if len(self.buffer) < 9 + length:
                    break
                frame, self.buffer = self.buffer[:9 + length], self.buffer[9 + length:]
                kind, flags = frame[3], frame[4]
                stream_id = int.from_bytes(frame[5:9], "big") & 0x7FFFFFFF
                self.frames.append((kind, flags, stream_id, length))
                if kind == 0x7:
                    # GOAWAY is kept out of h2, which would refuse every later frame: the
                    # scenarios go on answering streams at or below last_stream_id.
                    self.goaways.append((int.from_bytes(frame[9:13], "big") & 0x7FFFFFFF,
                                         int.from_bytes(frame[13:17], "big")))
                    continue
                for event in self.h2.receive_data(frame):
                    self.events.append(event)
                    if isinstance(event, h2.events.DataReceived) and event.flow_controlled_length:
                        self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            self.flush()

    def of(self, stream_id):
        return [e for e in self.events if getattr(e, "stream_id", None) == stream_id]

    def done(self, stream_id):
        return any(isinstance(e, (h2.events.StreamEnded, h2.events.StreamReset)) for e in self.of(stream_id))

    def call(self, scenario, headers=(), message=b"hello", timeout=10):
        stream_id = self.request(scenario, headers, message)
        self.pump(lambda: self.done(stream_id), timeout)
        return Response(self.of(stream_id))

    def wait_closed(self, timeout=5):
        if not self.closed:
            self.pump(lambda: self.closed, timeout)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class Response:
    def __init__(self, events):
        self.events = events
        self.header_blocks = [e for e in events if isinstance(e, (h2.events.ResponseReceived,
                                                                   h2.events.InformationalResponseReceived,
                                                                   h2.events.TrailersReceived))]
        response = [e for e in events if isinstance(e, h2.events.ResponseReceived)]
        self.headers = response[0].headers if response else []
        trailers = [e for e in events if isinstance(e, h2.events.TrailersReceived)]
        self.trailers = trailers[0].headers if trailers else []
        self.frames = [e.data for e in events if isinstance(e, h2.events.DataReceived)]
        self.body = b"".join(self.frames)
        resets = [e for e in events if isinstance(e, h2.events.StreamReset)]
        self.reset = resets[0].error_code if resets else None

    @property
    def message(self):
        return self.body[5:]

    def json(self):
        return json.loads(self.message)


class FaultServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cert, key = make_certificate(cls.tmp.name)
        cls.cert = cert
        state = os.path.join(cls.tmp.name, "state")
        cls.unix_path = os.path.join(cls.tmp.name, "faults.sock")
        cls.abstract_name = f"authrpc-fault-self-test-{os.getpid()}"
        cls.process = subprocess.Popen(
            [sys.executable, SERVER, "--state-dir", state, "--exit-with-stdin", "--tls-cert", cert, "--tls-key", key,
             "--unix", cls.unix_path, "--unix-abstract", cls.abstract_name],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = cls.process.stdout.readline().strip()
        assert line.startswith("FAULTS READY "), line
        cls.path = line[len("FAULTS READY "):]
        with open(cls.path) as handle:
            cls.info = json.load(handle)
        cls.ports = cls.info["ports"]

    @classmethod
    def tearDownClass(cls):
        cls.process.stdin.close()  # --exit-with-stdin: EOF ends the server
        try:
            cls.process.wait(timeout=5)
        finally:
            if cls.process.poll() is None:
                cls.process.kill()
                cls.process.wait()
            cls.process.stdout.close()
            cls.tmp.cleanup()

    def client(self, personality="h2c", tls_context=None):
        client = Client(self.ports[personality], tls_context)
        self.addCleanup(client.close)
        return client

    def tls_context(self, protocols):
        context = ssl.create_default_context(cafile=self.cert)
        context.set_alpn_protocols(protocols)
        return context

    # ------------------------------------------------------------------------------------

    def test_ready_file(self):
        self.assertTrue(os.path.isabs(self.path))
        self.assertEqual(self.info["pid"], self.process.pid)
        self.assertEqual(self.info["host"], "127.0.0.1")
        self.assertEqual(set(self.ports), {"h2c", "h2c_limited", "h2c_small_header_list",
                                           "h2c_goaway_after_first", "h2c_no_ping_ack", "h2c_bad_initial_window",
                                           "tls", "tls_no_alpn", "tls12_renegotiate"})
        self.assertEqual(self.info["unix"], self.unix_path)
        self.assertEqual(self.info["unix_abstract"], self.abstract_name)

    def test_echo_request_returns_what_was_sent(self):
        client = self.client()
        response = client.call("EchoRequest", [("x-one", "1"), ("x-dup", "a"), ("x-dup", "b")], b"\x00\xffbody")
        document = response.json()
        self.assertEqual(document["headers"], [
            [":method", "POST"], [":scheme", "http"], [":path", "/fault.Fault/EchoRequest"],
            [":authority", "faults.test"], ["content-type", "application/grpc"], ["te", "trailers"],
            ["x-one", "1"], ["x-dup", "a"], ["x-dup", "b"]])
        self.assertEqual(document["body_hex"], grpc_frame(b"\x00\xffbody").hex())
        self.assertEqual(document["stream_id"], 1)
        self.assertIn((":status", "200"), response.headers)
        self.assertEqual(response.trailers, [("grpc-status", "0")])

    def test_echo_and_gzip(self):
        client = self.client()
        self.assertEqual(client.call("Echo", message=b"ping").message, b"ping")
        response = client.call("GzipResponse", message=b"squeeze me")
        self.assertIn(("grpc-encoding", "gzip"), response.headers)
        self.assertEqual(response.body[0], 1)
        self.assertEqual(gzip.decompress(response.message), b"squeeze me")

    def test_quiet_sink_counts_the_body_and_gives_no_window_back(self):
        client = self.client()
        response = client.call("QuietSink", message=b"x" * 16000)
        self.assertEqual(response.message, str(16000 + 5).encode("ascii"))
        # No WINDOW_UPDATE (type 8) for the stream, and none for the connection but the one that
        # opens its window at the start.
        updates = [stream_id for kind, _, stream_id, _ in client.frames if kind == 0x8]
        self.assertEqual(updates, [0])

    def test_trailers_only_is_one_header_block(self):
        client = self.client()
        response = client.call("TrailersOnly")
        # On the wire: exactly one HEADERS frame (type 1) for the stream, with END_STREAM (0x1).
        frames = [(kind, flags) for kind, flags, stream_id, _ in client.frames if stream_id == 1]
        self.assertEqual(len(frames), 1)
        self.assertEqual(frames[0][0], 0x1)
        self.assertTrue(frames[0][1] & 0x1)
        self.assertEqual(len(response.header_blocks), 1)
        self.assertIsNotNone(response.header_blocks[0].stream_ended)
        self.assertEqual(response.frames, [])
        self.assertIn(("grpc-status", "16"), response.headers)
        self.assertIn(("grpc-message", "token%20expired"), response.headers)
        self.assertIn(("www-authenticate", 'Bearer error="invalid_token"'), response.headers)

    def test_split_prefix_frame_sizes(self):
        response = self.client().call("SplitPrefix")
        self.assertEqual([len(frame) for frame in response.frames], [1] * 5 + [7] * 42 + [6])
        self.assertEqual(response.body, grpc_frame(bytes(i % 256 for i in range(300))))
        self.assertEqual(response.trailers, [("grpc-status", "0")])

    def test_rst_stream_codes(self):
        client = self.client()
        for code in (2, 7, 8, 11):
            response = client.call("RstStream", [("x-fault-code", str(code))])
            self.assertEqual(response.reset, code)
            self.assertEqual(response.header_blocks, [])
        response = client.call("RstStream", [("x-fault-after-headers", "1")])
        self.assertEqual(response.reset, 2)
        self.assertIn((":status", "200"), response.headers)
        # The connection survives.
        self.assertEqual(client.call("Echo", message=b"still here").message, b"still here")

    def test_goaway_not_processed(self):
        client = self.client()
        client.call("Echo")
        stream_id = client.request("GoawayNotProcessed")
        self.assertEqual(stream_id, 3)
        client.pump(lambda: client.goaways)
        self.assertEqual(client.goaways, [(1, 0)])
        client.wait_closed()
        self.assertEqual(client.of(3), [])

    def test_goaway_then_complete(self):
        client = self.client()
        response = client.call("GoawayThenComplete")
        self.assertEqual(client.goaways, [(1, 0)])
        self.assertEqual(response.body, grpc_frame(b"done"))
        self.assertEqual(response.trailers, [("grpc-status", "0")])
        client.wait_closed()

    def test_goaway_after_first_personality(self):
        client = self.client("h2c_goaway_after_first")
        first = client.call("EchoRequest")
        self.assertEqual(first.json()["stream_id"], 1)
        client.request("EchoRequest")
        client.wait_closed()
        self.assertEqual(client.goaways, [(1, 0)])
        self.assertEqual(client.of(3), [])

    def test_hang_then_client_reset_is_recorded(self):
        tag = f"self-test-{time.monotonic_ns()}"
        client = self.client()
        stream_id = client.request("Hang", [("x-fault-tag", tag)])
        probe = self.client()
        events = []
        for _ in range(50):
            events = probe.call("Events", [("x-fault-query-tag", tag)]).json()["events"]
            if any(e["type"] == "end_stream" for e in events):
                break
            time.sleep(0.05)
        client.h2.reset_stream(stream_id, error_code=8)
        client.flush()
        for _ in range(50):
            # The plain x-fault-tag works as the query too, and Events streams are not recorded.
            events = probe.call("Events", [("x-fault-tag", tag)]).json()["events"]
            if any(e["type"] == "rst_stream" for e in events):
                break
            time.sleep(0.05)
        self.assertEqual(events, [
            {"type": "headers", "stream_id": stream_id},
            {"type": "end_stream", "stream_id": stream_id},
            {"type": "rst_stream", "stream_id": stream_id, "error_code": 8},
        ])

    def test_settings_of_each_personality(self):
        def remote_settings(personality):
            client = self.client(personality)
            client.call("Echo")
            return client.h2.remote_settings

        codes = h2.settings.SettingCodes
        normal = remote_settings("h2c")
        self.assertEqual(normal[codes.MAX_CONCURRENT_STREAMS], 1000)
        self.assertEqual(normal[codes.INITIAL_WINDOW_SIZE], 16 << 20)
        self.assertEqual(normal[codes.MAX_FRAME_SIZE], 16384)
        self.assertEqual(remote_settings("h2c_limited")[codes.MAX_CONCURRENT_STREAMS], 2)
        self.assertEqual(remote_settings("h2c_small_header_list")[codes.MAX_HEADER_LIST_SIZE], 1024)

    def test_many_delayed_streams_do_not_block_each_other(self):
        client = self.client()
        started = time.monotonic()
        ids = [client.request("Echo", [("x-fault-delay-ms", "300")], f"m{i}".encode()) for i in range(1000)]
        client.pump(lambda: all(client.done(i) for i in ids), timeout=15)
        self.assertLess(time.monotonic() - started, 10)
        for index, stream_id in enumerate(ids):
            self.assertEqual(Response(client.of(stream_id)).message, f"m{index}".encode())

    def test_oversized_respects_frame_size(self):
        response = self.client().call("Oversized", [("x-fault-size", "100000")])
        self.assertEqual(response.body[:5], b"\x00" + (100000).to_bytes(4, "big"))
        self.assertEqual(len(response.body), 100005)
        self.assertTrue(all(len(frame) <= 16384 for frame in response.frames))
        self.assertEqual(response.trailers, [("grpc-status", "0")])

    def test_assorted_scenarios(self):
        client = self.client()
        informational = client.call("Informational")
        self.assertEqual(informational.header_blocks[0].headers, [(":status", "100")])
        self.assertIn("headers", informational.json())

        status = client.call("HTTPStatus", [("x-fault-code", "503")])
        self.assertEqual(status.headers, [(":status", "503"), ("content-type", "text/plain")])
        self.assertEqual(status.body, b"fault body")

        metadata = client.call("Metadata")
        self.assertEqual([v for n, v in metadata.headers if n == "x-dup"], ["one", "two"])
        self.assertIn(("x-multi-bin", "AAE,AgM="), metadata.headers)
        self.assertIn(("x-bin-padded-bin", "//4="), metadata.headers)
        details = dict(metadata.trailers)["grpc-status-details-bin"]
        self.assertEqual(base64.b64decode(details + "=" * (-len(details) % 4)), b"\x08\x03\x12\x07details")

        unknown = client.call("NoSuchThing")
        self.assertIn(("grpc-status", "12"), unknown.headers)
        self.assertIn(("grpc-message", "unknown fault scenario NoSuchThing"), unknown.headers)

        two = client.call("TwoMessages")
        self.assertEqual(two.body, grpc_frame(b"a") + grpc_frame(b"b"))

        close = client.request("CloseMidStream")
        client.wait_closed()
        self.assertEqual(Response(client.of(close)).body, b"\x00\x00\x00")

    def test_hostile_text(self):
        sys.path.insert(0, os.path.dirname(SERVER))
        import h2_fault_server as server

        client = self.client()
        # x-fault-scenario picks the scenario whatever the path says.
        success = client.call("UnaryCall", [("x-fault-scenario", "HostileText")])
        self.assertIn(("x-hostile", server.HOSTILE_FIELD_TEXT), success.headers)
        self.assertIn(("x-hostile-long", "L" * 5000 + "\u202e"), success.trailers)
        self.assertEqual([v for n, v in success.trailers if n == "x-hostile-repeated"], [str(i) for i in range(100)])
        username = server.HOSTILE_TEXT.encode("utf-8")
        self.assertIn(b"\r\n" + server.HOSTILE_FORGED_LINE.encode() + b"\n\x00", username)
        self.assertTrue(128 <= len(username) < 1 << 14)  # a two-byte varint length: 7 bits, then the rest
        varint = bytes([len(username) & 0x7F | 0x80, len(username) >> 7])
        self.assertEqual(success.message, b"\x12" + varint + username + b"\x1a" + varint + username)

        failure = client.call("HostileText", [("x-fault-code", "16")])
        self.assertEqual(len(failure.header_blocks), 1)
        self.assertIn(("grpc-status", "16"), failure.headers)
        message = dict(failure.headers)["grpc-message"]
        self.assertTrue(all(0x21 <= ord(c) <= 0x7E for c in message), "grpc-message is percent-encoded ASCII")
        self.assertEqual(urllib.parse.unquote(message), server.HOSTILE_TEXT)
        self.assertIn(("www-authenticate", f'Bearer realm="{server.HOSTILE_FIELD_TEXT}", error="invalid_token"'),
                      failure.headers)
        self.assertIn(("x-hostile", server.HOSTILE_FIELD_TEXT), failure.headers)

        goaway = self.client()
        goaway.call("Echo")
        goaway.request("HostileText", [("x-fault-goaway", "1")])
        goaway.pump(lambda: goaway.goaways)
        self.assertEqual(goaway.goaways, [(1, 0xB)])
        goaway.wait_closed()
        self.assertEqual(goaway.of(3), [])
        frame = next(f for f in goaway.frames if f[0] == 0x7)
        self.assertEqual(frame[3], 8 + len(server.HOSTILE_TEXT.encode("utf-8")), "the text is the GOAWAY's debug data")

    def test_retry_fails_the_first_attempts_of_a_tag_then_answers(self):
        client = Client(self.ports["h2c"])
        try:
            tag = f"retry-{time.monotonic_ns()}"
            base = [("x-fault-tag", tag), ("x-fault-failures", "2"), ("x-fault-pushback", "25")]
            first = client.call("Retry", base)
            self.assertEqual(len(first.header_blocks), 1)  # Trailers-Only
            fields = dict(first.headers)
            self.assertEqual(fields["grpc-status"], "14")
            self.assertEqual(fields["grpc-message"], "attempt 1 failed")
            self.assertEqual(fields["grpc-retry-pushback-ms"], "25")
            second = client.call("Retry", base + [("grpc-previous-rpc-attempts", "1"), ("x-fault-headers-first", "1")])
            self.assertEqual(len(second.header_blocks), 2)  # headers, then the failure in trailers
            self.assertEqual(dict(second.trailers)["grpc-status"], "14")
            third = client.call("Retry", base + [("grpc-previous-rpc-attempts", "2"), ("grpc-timeout", "5S")])
            self.assertEqual(dict(third.trailers)["grpc-status"], "0")
            self.assertEqual(third.json(), {"attempt": 3})
            events = client.call("Events", [("x-fault-query-tag", tag)]).json()["events"]
            attempts = [event for event in events if event["type"] == "attempt"]
            self.assertEqual([event["attempt"] for event in attempts], [1, 2, 3])
            self.assertEqual([event["previous_rpc_attempts"] for event in attempts], [None, "1", "2"])
            self.assertEqual(attempts[2]["grpc_timeout"], "5S")
            self.assertEqual(attempts[0]["body_hex"], grpc_frame(b"hello").hex())
            self.assertLessEqual(attempts[0]["monotonic"], attempts[2]["monotonic"])
            other = client.call("Retry", [("x-fault-tag", tag + "-b"), ("x-fault-failures", "0")])
            self.assertEqual(other.json(), {"attempt": 1})  # counted per tag
        finally:
            client.close()

    def test_tls_personalities(self):
        client = self.client("tls", self.tls_context(["h2"]))
        self.assertEqual(client.sock.selected_alpn_protocol(), "h2")
        document = client.call("EchoRequest").json()
        self.assertIn([":path", "/fault.Fault/EchoRequest"], document["headers"])

        sock = socket.create_connection(("127.0.0.1", self.ports["tls_no_alpn"]), timeout=10)
        with self.tls_context(["h2"]).wrap_socket(sock, server_hostname="localhost") as tls:
            self.assertNotEqual(tls.selected_alpn_protocol(), "h2")


    # ------------------------------------------------------------------ connection-ending scenarios

    def test_close_after_request_sends_nothing_then_fin(self):
        client = self.client()
        stream_id = client.request("CloseAfterRequest")
        client.wait_closed()
        self.assertEqual(client.of(stream_id), [])

    def test_reset_after_request_resets_the_tcp_connection(self):
        client = self.client()
        client.request("ResetAfterRequest")
        client.sock.settimeout(5)
        with self.assertRaises(ConnectionResetError):
            while client.sock.recv(65536):
                pass

    def test_goaway_then_close_covers_the_stream_and_never_answers(self):
        client = self.client()
        stream_id = client.request("GoawayThenClose")
        client.wait_closed()
        self.assertEqual(client.goaways, [(stream_id, 0)])
        self.assertFalse(any(isinstance(e, (h2.events.ResponseReceived, h2.events.DataReceived)) for e in client.of(stream_id)))

    def test_connection_error_sends_a_zero_window_update_on_stream_zero(self):
        client = self.client()
        client.request("ConnectionError")
        with self.assertRaises(h2.exceptions.ProtocolError):
            client.pump(lambda: False, timeout=5)
        self.assertEqual(client.frames[-1], (0x8, 0, 0, 4))

    def test_tls12_renegotiate_starts_a_renegotiation_after_the_first_headers(self):
        tag = f"self-test-{time.monotonic_ns()}"
        context = ssl.create_default_context(cafile=self.cert)
        context.maximum_version = ssl.TLSVersion.TLSv1_2
        context.set_alpn_protocols(["h2"])
        incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        tls = context.wrap_bio(incoming, outgoing, server_hostname="localhost")
        sock = socket.create_connection(("127.0.0.1", self.ports["tls12_renegotiate"]), timeout=10)
        self.addCleanup(sock.close)

        def exchange():
            """Sends what TLS has queued, then feeds what the server sent; False once it closed."""
            if outgoing.pending:
                sock.sendall(outgoing.read())
            data = sock.recv(65536)
            incoming.write(data)
            return bool(data)

        while True:
            try:
                tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self.assertTrue(exchange())
        if outgoing.pending:
            sock.sendall(outgoing.read())
        self.assertEqual(tls.version(), "TLSv1.2")
        self.assertEqual(tls.selected_alpn_protocol(), "h2")

        connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        connection.initiate_connection()
        connection.send_headers(1, [(":method", "POST"), (":scheme", "https"), (":path", "/fault.Fault/Hang"),
                                    (":authority", "localhost"), ("x-fault-tag", tag)])
        connection.send_data(1, grpc_frame(b"hi"), end_stream=True)
        tls.write(connection.data_to_send())
        sock.sendall(outgoing.read())

        # Then a PING, and a HelloRequest: our TLS layer answers with a new ClientHello, a
        # handshake record (content type 22), instead of application data.
        sock.settimeout(5)
        received = b""
        renegotiating = False
        for _ in range(20):
            incoming.write(sock.recv(65536))
            try:
                while True:
                    received += tls.read(65536)
            except ssl.SSLWantReadError:
                pass
            if outgoing.pending:
                renegotiating = outgoing.read()[:1] == b"\x16"
                break
        self.assertTrue(renegotiating)
        self.assertTrue(received.endswith(b"\x00\x00\x08\x06\x00\x00\x00\x00\x00renegot!"), received)

        # The request went through to the h2c side before that.
        probe = self.client()
        events = []
        for _ in range(50):
            events = probe.call("Events", [("x-fault-query-tag", tag)]).json()["events"]
            if any(e["type"] == "end_stream" for e in events):
                break
            time.sleep(0.05)
        self.assertEqual([e["type"] for e in events], ["headers", "end_stream"])

    # ------------------------------------------------------------------ header-list scenarios

    def test_header_flood_indexes_once_and_references(self):
        client = self.client()
        client.h2.decoder.max_header_list_size = 8 << 20  # h2's own bound is 64 KiB
        response = client.call("HeaderFlood", [("x-fault-count", "1000"), ("x-fault-size", "4000")])
        self.assertEqual([v for n, v in response.headers if n == "x-flood"], ["v" * 4000] * 1000)
        self.assertEqual(response.message, b"m")
        # On the wire the block is small: one literal, then one-byte references.
        wire = sum(length for kind, _, stream_id, length in client.frames if stream_id == 1 and kind in (0x1, 0x9))
        self.assertLess(wire, 6000)

    def test_header_flood_in_trailers_and_in_an_informational_block(self):
        client = self.client()
        trailers = client.call("HeaderFlood", [("x-fault-count", "3"), ("x-fault-size", "10"), ("x-fault-where", "trailers")])
        self.assertEqual(trailers.trailers, [("grpc-status", "0")] + [("x-flood", "v" * 10)] * 3)
        informational = client.call("HeaderFlood", [("x-fault-count", "2"), ("x-fault-size", "10"),
                                                    ("x-fault-where", "informational")], message=b"x")
        self.assertEqual(informational.header_blocks[0].headers, [(":status", "103")] + [("x-flood", "v" * 10)] * 2)
        self.assertEqual(informational.message, b"x")

    def test_informational_flood(self):
        response = self.client().call("InformationalFlood", [("x-fault-count", "20")], message=b"after")
        informational = [e for e in response.events if isinstance(e, h2.events.InformationalResponseReceived)]
        self.assertEqual(len(informational), 20)
        self.assertEqual(response.message, b"after")

    def test_client_settings_echoes_what_the_client_sent(self):
        document = self.client().call("ClientSettings").json()
        self.assertEqual(document["initial_window_size"], 65535)
        self.assertEqual(document["header_table_size"], 4096)

    def test_control_frame_floods(self):
        client = self.client()
        client.request("PingFlood", [("x-fault-count", "50")])
        client.pump(lambda: sum(1 for kind, flags, _, _ in client.frames if kind == 0x6 and not flags & 0x1) >= 50)
        client = self.client()
        client.request("SettingsFlood", [("x-fault-count", "40")])
        client.pump(lambda: any(kind == 0x4 and length == 40 * 6 for kind, _, _, length in client.frames))
        client = self.client()
        response = client.call("ContinuationFlood", [("x-fault-count", "5")])
        self.assertEqual(response.headers, [(":status", "200")] + [("x-c", "v")] * 5)
        self.assertEqual([kind for kind, _, stream_id, _ in client.frames if stream_id == 1], [0x1] + [0x9] * 5)

    def test_unix_sockets_serve_h2c(self):
        for address in (self.unix_path, "\0" + self.abstract_name):
            client = Client(None, unix_address=address)
            self.addCleanup(client.close)
            response = client.call("Echo", message=b"over unix")
            self.assertEqual(response.message, b"over unix")

    def test_bad_initial_window_personality_announces_two_to_the_31(self):
        sock = socket.create_connection(("127.0.0.1", self.ports["h2c_bad_initial_window"]), timeout=10)
        self.addCleanup(sock.close)
        sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 0x4, 0, 0, 0, 0, 0]))
        data = b""
        while len(data) < 9 or len(data) < 9 + int.from_bytes(data[:3], "big"):
            chunk = sock.recv(4096)
            self.assertTrue(chunk, "closed before the first frame")
            data += chunk
        length = int.from_bytes(data[:3], "big")
        self.assertEqual((data[3], data[4]), (0x4, 0))  # the server's first frame: SETTINGS, not an ACK
        payload = data[9:9 + length]
        entries = {int.from_bytes(payload[i:i + 2], "big"): int.from_bytes(payload[i + 2:i + 6], "big")
                   for i in range(0, len(payload), 6)}
        self.assertEqual(entries[0x4], 1 << 31)
        # The client's GOAWAY (FLOW_CONTROL_ERROR) does not make the server close.
        sock.sendall(bytes([0, 0, 8, 0x7, 0, 0, 0, 0, 0]) + (0).to_bytes(4, "big") + (3).to_bytes(4, "big"))
        sock.settimeout(1.0)
        with self.assertRaises(socket.timeout):
            while sock.recv(4096):
                pass

    def hostile_frames(self, scenario):
        """The frames received for a scenario that h2 (rightly) refuses to accept."""
        client = self.client()
        stream_id = client.request(scenario)
        try:
            client.pump(lambda: any(s == stream_id for _, _, s, _ in client.frames) and client.done(stream_id),
                        timeout=3)
        except (h2.exceptions.ProtocolError, AssertionError):
            pass
        return stream_id, client

    def test_stream_window_update_zero(self):
        stream_id, client = self.hostile_frames("StreamWindowUpdateZero")
        self.assertIn((0x8, 0, stream_id, 4), client.frames)

    def test_data_before_headers(self):
        stream_id, client = self.hostile_frames("DataBeforeHeaders")
        first = next(frame for frame in client.frames if frame[2] == stream_id)
        self.assertEqual(first, (0x0, 0x1, stream_id, 10))

    def test_content_length_mismatch(self):
        stream_id, client = self.hostile_frames("ContentLengthMismatch")
        kinds = [(kind, flags & 0x1, length) for kind, flags, s, length in client.frames if s == stream_id]
        self.assertEqual(kinds[0][0], 0x1)
        self.assertIn((0x0, 0, 10), kinds)  # 10 bytes of body where 4 were announced; no END_STREAM
        self.assertNotIn(0x3, [kind for kind, _, _ in kinds])  # the server never resets it

    def test_content_length_overrun(self):
        # h2 refuses the frame (larger than its 16 KiB), but it is recorded first: one DATA frame
        # of 256 KiB, written in two parts, where 100000 bytes were announced.
        stream_id, client = self.hostile_frames("ContentLengthOverrun")
        kinds = [(kind, length) for kind, _, s, length in client.frames if s == stream_id]
        self.assertEqual(kinds[0][0], 0x1)
        self.assertIn((0x0, 256 << 10), kinds)

    def test_echo_ending_in_data(self):
        client = self.client()
        response = client.call("EchoEndingInData", message=b"ends here")
        self.assertEqual(response.body, grpc_frame(b"ends here"))
        ended = [frame for frame in client.frames if frame[0] in (0x0, 0x1) and frame[1] & 0x1]
        self.assertEqual([frame[0] for frame in ended], [0x0])  # END_STREAM on DATA, no trailers

    def test_declare_and_stall(self):
        # A prefix that declares 100000 bytes, 1 KiB of them, and the stream stays open.
        client = self.client()
        stream_id = client.request("DeclareAndStall", headers=[("x-fault-size", "100000")])
        client.pump(lambda: sum(len(e.data) for e in client.of(stream_id)
                                if isinstance(e, h2.events.DataReceived)) >= 1029)
        body = Response(client.of(stream_id)).body
        self.assertEqual(body[:5], bytes([0]) + (100000).to_bytes(4, "big"))
        self.assertEqual(len(body), 1029)
        self.assertFalse(client.done(stream_id))

    def test_padded_echo(self):
        client = self.client()
        # One request frame at this client's 16 KiB, two padded answer frames.
        message = bytes(index % 256 for index in range(16300))
        self.assertEqual(client.call("PaddedEcho", message=message).body, grpc_frame(message))
        data = [(flags, length) for kind, flags, _, length in client.frames if kind == 0x0]
        self.assertEqual(len(data), 2)
        self.assertTrue(all(flags & 0x8 and length <= 16384 for flags, length in data), data)


if __name__ == "__main__":
    unittest.main()
