"""Self-test for oauth_hostile_server.py: starts it, registers scripts, talks to it over real sockets.

Run: .venv/bin/python -m unittest Tests/Peers/test_oauth_hostile_server.py -v   (from the package root)
"""

import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse

SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oauth_hostile_server.py")


class HostileServerTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.TemporaryDirectory()
        cls.process = subprocess.Popen(
            [sys.executable, SERVER, "--state-dir", cls.directory.name, "--exit-with-stdin"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = cls.process.stdout.readline()
        if not line.startswith("HOSTILE READY "):
            raise RuntimeError(f"the server did not start: {line!r}")
        with open(line.split(" ", 2)[2].strip()) as handle:
            cls.info = json.load(handle)

    @classmethod
    def tearDownClass(cls):
        cls.process.stdin.close()
        cls.process.wait(10)
        cls.process.stdout.close()
        cls.directory.cleanup()

    def connection(self):
        return http.client.HTTPConnection("127.0.0.1", self.info["port"], timeout=10)

    def register(self, script):
        connection = self.connection()
        connection.request("POST", "/scripts", body=json.dumps(script), headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        document = json.loads(response.read())
        connection.close()
        return response.status, document

    def stats(self, identifier):
        connection = self.connection()
        connection.request("GET", f"/scripts/{identifier}")
        document = json.loads(connection.getresponse().read())
        connection.close()
        return document

    def settled_stats(self, identifier):
        """The script's counts once every hit has been played to its end (the server counts a hit
        after its last byte, which the client can read first). Gives up after 10 s."""
        deadline = time.monotonic() + 10
        stats = self.stats(identifier)
        while stats["completed"] + stats["aborted"] < stats["hits"] and time.monotonic() < deadline:
            time.sleep(0.02)
            stats = self.stats(identifier)
        return stats

    def test_ready_file_names_a_loopback_url(self):
        self.assertEqual(self.info["host"], "127.0.0.1")
        self.assertEqual(self.info["url"], f"http://127.0.0.1:{self.info['port']}")

    def test_a_script_is_played_byte_for_byte_and_counted_without_values(self):
        body = '{"access_token":"x","expires_in":"NaN","token_type":"mac"}'
        status, script = self.register({"status": 200, "body": body, "headers": [["X-Extra", "1"]]})
        self.assertEqual(status, 200)
        connection = self.connection()
        connection.request("POST", script["path"] + "/token", body="grant_type=refresh_token&refresh_token=SECRET",
                           headers={"Content-Type": "application/x-www-form-urlencoded"})
        response = connection.getresponse()
        self.assertEqual(response.status, 200)
        self.assertEqual(response.getheader("X-Extra"), "1")
        self.assertEqual(response.getheader("Content-Type"), "application/json")
        self.assertEqual(response.read().decode(), body)
        connection.close()
        stats = self.settled_stats(script["id"])
        self.assertEqual(stats["hits"], 1)
        self.assertEqual(stats["completed"], 1)
        self.assertEqual(stats["requests"][0]["form_keys"], ["grant_type", "refresh_token"])
        self.assertNotIn("SECRET", json.dumps(stats))

    def test_a_repeated_fill_builds_a_large_body(self):
        _, script = self.register({"repeat": {"prefix": '{"access_token":"', "fill": "A", "count": 1_200_000, "suffix": '"}'}})
        connection = self.connection()
        connection.request("GET", script["path"])
        response = connection.getresponse()
        data = response.read()
        connection.close()
        self.assertEqual(int(response.getheader("Content-Length")), len(data))
        self.assertEqual(len(json.loads(data)["access_token"]), 1_200_000)

    def test_a_client_that_leaves_early_is_counted_as_aborted_with_the_bytes_sent_so_far(self):
        _, script = self.register({"repeat": {"fill": "0123456789abcdef", "count": 4 * 1024 * 1024}})  # 64 MiB
        with socket.create_connection(("127.0.0.1", self.info["port"]), timeout=10) as client:
            client.sendall(f"GET {script['path']} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            client.recv(4096)
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        stats = self.settled_stats(script["id"])
        self.assertEqual(stats["aborted"], 1)
        self.assertLess(stats["bytes_sent"], 64 * 1024 * 1024)

    def test_redirects_lying_lengths_and_delays_are_played(self):
        _, target = self.register({"body": "{}"})
        _, redirect = self.register({"status": 307, "headers": [["Location", target["url"]]], "body": ""})
        connection = self.connection()
        connection.request("POST", redirect["path"], body="a=b")
        response = connection.getresponse()
        self.assertEqual(response.status, 307)
        self.assertEqual(response.getheader("Location"), target["url"])
        response.read()
        connection.close()
        self.assertEqual(self.stats(target["id"])["hits"], 0)

        _, lying = self.register({"body": "{}", "content_length": 10_000_000})
        connection = self.connection()
        connection.request("GET", lying["path"])
        response = connection.getresponse()
        self.assertEqual(response.getheader("Content-Length"), "10000000")
        with self.assertRaises(http.client.IncompleteRead):
            response.read()
        connection.close()

        _, slow = self.register({"body": "{}", "delay_ms": 300})
        connection = self.connection()
        start = time.monotonic()
        connection.request("GET", slow["path"])
        connection.getresponse().read()
        connection.close()
        self.assertGreaterEqual(time.monotonic() - start, 0.25)

    def raw_get(self, path, seconds=10):
        with socket.create_connection(("127.0.0.1", self.info["port"]), timeout=seconds) as client:
            client.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nX-Probe: 1\r\n\r\n".encode())
            data = b""
            while True:
                chunk = client.recv(65536)
                if not chunk:
                    return data
                data += chunk

    def test_chunked_bodies_filler_headers_raw_answers_and_a_dripped_head(self):
        _, chunked = self.register({"body": "0123456789", "content_length": "chunked", "chunk_bytes": 4})
        connection = self.connection()
        connection.request("GET", chunked["path"])
        response = connection.getresponse()
        self.assertEqual(response.getheader("Transfer-Encoding"), "chunked")
        self.assertEqual(response.read(), b"0123456789")  # http.client joins the chunks
        connection.close()
        data = self.raw_get(chunked["path"])
        self.assertTrue(data.endswith(b"4\r\n0123\r\n4\r\n4567\r\n2\r\n89\r\n0\r\nX-Trailer: t\r\n\r\n"), data)

        _, filled = self.register({"body": "{}", "filler_headers": {"count": 3, "bytes": 5}})
        self.assertEqual(self.raw_get(filled["path"]).count(b"X-Filler: fffff\r\n"), 3)

        raw = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxy"
        _, garbage = self.register({"raw": raw})
        self.assertEqual(self.raw_get(garbage["path"]), raw.encode())

        _, dripped = self.register({"body": "{}", "head_drip_ms": 20})
        start = time.monotonic()
        self.assertTrue(self.raw_get(dripped["path"]).startswith(b"HTTP/1.1 200 OK\r\n"))
        self.assertGreaterEqual(time.monotonic() - start, 1.0)  # 60-odd head bytes, 20 ms apart
        self.assertEqual(self.stats(dripped["id"])["requests"][0]["header_names"], ["Host", "X-Probe"])

    def test_invalid_scripts_are_refused_with_the_reason(self):
        for script, word in (({"status": 42}, "status"), ({"body": 5}, "body"), ({"nope": 1}, "unknown"),
                             ({"repeat": {"fill": "", "count": 3}}, "repeat"), ({"delay_ms": -1}, "delay_ms")):
            status, document = self.register(script)
            self.assertEqual(status, 400, script)
            self.assertIn(word, document["error"])

    def test_unknown_scripts_and_paths_are_404(self):
        for path in ("/s/s-000000000000", "/elsewhere"):
            connection = self.connection()
            connection.request("GET", path)
            self.assertEqual(connection.getresponse().status, 404)
            connection.close()


if __name__ == "__main__":
    unittest.main()
