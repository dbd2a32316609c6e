"""Self-test for backend_server.py: starts it on a second loopback address and on a unix socket,
calls it with grpcio, and checks what it records.

Run: .venv/bin/python -m unittest Tests/Peers/test_backend_server.py -v   (from the package root)
"""

import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

import grpc

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "backend_server.py")
sys.path.insert(0, os.path.join(HERE, "..", "..", "Examples", "Sandbox"))
import test_service  # noqa: E402


class BackendServerTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.pb, cls.pbg = test_service.load_protos(tempfile.mkdtemp(prefix="backend-test-protos-"))

    def start(self, listen, name):
        state = tempfile.mkdtemp(prefix="backend-test-")
        process = subprocess.Popen([sys.executable, SERVER, "--state-dir", state, "--listen", listen, "--name", name,
                                    "--exit-with-stdin"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.addCleanup(self.stop, process)
        line = process.stdout.readline()
        self.assertTrue(line.startswith("BACKEND READY "), line)
        with open(line.split(" ", 2)[2].strip()) as handle:
            return json.load(handle)

    @staticmethod
    def stop(process):
        process.stdin.close()
        process.wait(10)

    def call(self, target, call_id, delay_ms=0):
        with grpc.insecure_channel(target) as channel:
            stub = self.pbg.TestServiceStub(channel)
            metadata = [("x-call-id", call_id)] + ([("x-delay-ms", str(delay_ms))] if delay_ms else [])
            return stub.UnaryCall(self.pb.SimpleRequest(response_size=3), metadata=metadata, timeout=10)

    def ids(self, info):
        with open(info["ids_file"]) as handle:
            return handle.read().split()

    def test_records_each_call_and_answers_its_name(self):
        info = self.start("127.0.0.2:0", "second")
        self.assertGreater(info["port"], 0)
        response = self.call(f"127.0.0.2:{info['port']}", "call-1")
        self.assertEqual(response.username, "second")
        self.assertEqual(response.payload.body, b"\0\0\0")
        self.call(f"127.0.0.2:{info['port']}", "call-2")
        self.call(f"127.0.0.2:{info['port']}", "bad.id")
        self.assertEqual(self.ids(info), ["call-1", "call-2", "invalid"])

    def test_records_before_a_delay(self):
        info = self.start("127.0.0.3:0", "third")
        started = time.monotonic()
        self.call(f"127.0.0.3:{info['port']}", "slow", delay_ms=300)
        self.assertGreaterEqual(time.monotonic() - started, 0.3)
        self.assertEqual(self.ids(info), ["slow"])

    def test_unix_sockets(self):
        path = os.path.join(tempfile.mkdtemp(prefix="backend-test-"), "backend.sock")
        info = self.start(f"unix:{path}", "unix")
        self.assertEqual(self.call(f"unix:{path}", "over-unix").username, "unix")
        name = f"authrpc-backend-test-{os.getpid()}"
        abstract = self.start(f"unix-abstract:{name}", "abstract")
        self.assertEqual(self.call(f"unix-abstract:{name}", "over-abstract").username, "abstract")
        self.assertEqual(self.ids(info), ["over-unix"])
        self.assertEqual(self.ids(abstract), ["over-abstract"])

    def test_refuses_non_loopback(self):
        result = subprocess.run([sys.executable, SERVER, "--state-dir", tempfile.mkdtemp(), "--listen", "0.0.0.0:0",
                                 "--name", "x"], capture_output=True, text=True, timeout=60)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("loopback", result.stderr)


if __name__ == "__main__":
    unittest.main()
