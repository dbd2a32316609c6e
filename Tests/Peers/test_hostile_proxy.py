"""Self-test for hostile_proxy.py: starts it and checks each scenario over real sockets.

Run: .venv/bin/python -m unittest Tests/Peers/test_hostile_proxy.py -v   (from the package root)
"""

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

PROXY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hostile_proxy.py")


class EchoServer:
    """A loopback server that greets each connection with `hello` and echoes what it gets."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.echo, args=(sock,), daemon=True).start()

    @staticmethod
    def echo(sock):
        with sock:
            sock.sendall(b"hello")
            while True:
                data = sock.recv(4096)
                if not data:
                    return
                sock.sendall(data)


class HostileProxyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.process = subprocess.Popen([sys.executable, PROXY, "--state-dir", cls.tmp.name, "--exit-with-stdin"],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = cls.process.stdout.readline().strip()
        assert line.startswith("PROXY READY "), line
        with open(line[len("PROXY READY "):]) as handle:
            cls.port = json.load(handle)["port"]
        cls.echo = EchoServer()

    @classmethod
    def tearDownClass(cls):
        cls.process.stdin.close()
        try:
            cls.process.wait(timeout=5)
        finally:
            if cls.process.poll() is None:
                cls.process.kill()
                cls.process.wait()
            cls.process.stdout.close()
            cls.echo.listener.close()
            cls.tmp.cleanup()

    def connect(self, target, extra=b""):
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        self.addCleanup(sock.close)
        sock.sendall(b"CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s\r\n" % (target.encode(), target.encode(), extra))
        return sock

    def read(self, sock, count, timeout=10):
        data = b""
        deadline = time.monotonic() + timeout
        while len(data) < count and time.monotonic() < deadline:
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                # Never past `count`: the bytes after it (a relayed greeting) are the next read's.
                chunk = sock.recv(min(65536, count - len(data)))
            except socket.timeout:
                break
            if not chunk:
                break
            data += chunk
        return data

    def get(self, path):
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        with sock:
            sock.sendall(b"GET %s HTTP/1.1\r\nHost: proxy\r\n\r\n" % path.encode())
            data = self.read(sock, 1 << 20)
        return json.loads(data.partition(b"\r\n\r\n")[2])

    def test_status_answers(self):
        for code in (407, 403, 502):
            data = self.read(self.connect(f"status-{code}.hostile.test:443"), 1 << 16)
            self.assertTrue(data.startswith(b"HTTP/1.1 %d " % code), data)
        data = self.read(self.connect("status-407.hostile.test:443"), 1 << 16)
        self.assertIn(b'Proxy-Authenticate: Basic realm="hostile"', data)

    def test_garbage_is_not_http(self):
        data = self.read(self.connect("garbage.hostile.test:443"), 1 << 16)
        self.assertTrue(data.startswith(b"SSH-2.0-"))
        self.assertIn(b"\x1b[2J", data)

    def test_endless_header_keeps_coming(self):
        data = self.read(self.connect("endless-header.hostile.test:443"), 200 << 10)
        self.assertTrue(data.startswith(b"HTTP/1.1 200 "))
        self.assertGreaterEqual(len(data), 200 << 10)
        self.assertEqual(data.count(b"\r\n"), 1)  # the status line's; the field after it never ends

    def test_many_fields(self):
        data = self.read(self.connect("many-fields.hostile.test:443"), 1 << 20, timeout=3)
        self.assertEqual(data.count(b"X-Field-"), 500)
        self.assertTrue(data.endswith(b"\r\n\r\n"))

    def test_trickle_is_one_byte_a_second(self):
        sock = self.connect("trickle.hostile.test:443")
        data = self.read(sock, 1 << 10, timeout=2.5)
        self.assertTrue(b"HTTP/1.1 200 Connection established".startswith(data) and 1 <= len(data) <= 4, data)

    def test_close_mid_answer(self):
        data = self.read(self.connect("close-mid-answer.hostile.test:443"), 1 << 10)
        self.assertEqual(data, b"HTTP/1.1 200 Conn")

    def test_unknown_targets_are_never_dialled(self):
        data = self.read(self.connect("example.com:443"), 1 << 10)
        self.assertTrue(data.startswith(b"HTTP/1.1 502 "))

    def test_relay_and_records(self):
        tag = f"tag{time.monotonic_ns()}"
        sock = self.connect(f"{tag}.relay.test:{self.echo.port}", b"Proxy-Authorization: Basic dTpw\r\n")
        head = self.read(sock, len(b"HTTP/1.1 200 Connection established\r\nVia: hostile-proxy\r\n\r\n"))
        self.assertTrue(head.startswith(b"HTTP/1.1 200 "))
        self.assertEqual(self.read(sock, 5), b"hello")
        sock.sendall(b"secret-needle")
        self.assertEqual(self.read(sock, 13), b"secret-needle")
        requests = [r for r in self.get("/requests")["requests"] if r["target"].startswith(tag)]
        self.assertEqual(len(requests), 1)
        self.assertEqual(requests[0]["method"], "CONNECT")
        self.assertEqual([name for name, _ in requests[0]["headers"]], ["Host", "Proxy-Authorization"])
        self.assertTrue(self.get("/search?needle=secret-needle")["found"])
        self.assertFalse(self.get("/search?needle=never-sent")["found"])

    def test_eager_relay_sends_the_servers_first_bytes_with_the_answer(self):
        sock = self.connect(f"eager.relay.test:{self.echo.port}")
        data = self.read(sock, 1 << 10, timeout=3)
        self.assertTrue(data.startswith(b"HTTP/1.1 200 "))
        self.assertTrue(data.endswith(b"\r\n\r\nhello"), data)


if __name__ == "__main__":
    unittest.main()
