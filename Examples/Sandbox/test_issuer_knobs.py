"""Self-test of the issuer's test knobs for token-endpoint behaviour and tenant discovery documents.

Starts issuer.Issuer in this process on a loopback port and talks to it over HTTP.

    .venv/bin/python -m unittest discover -s Examples/Sandbox -p 'test_issuer_knobs.py'
"""

import json
import os
import socket
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
from issuer import Issuer  # noqa: E402


class IssuerKnobTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.TemporaryDirectory()
        cls.issuer = Issuer(host="127.0.0.1", port=0, token_lifetime=3600, auto_approve_after=None,
                            state_dir=cls.directory.name, user_email="u@example.com", user_sub="u")
        cls.issuer.start()

    @classmethod
    def tearDownClass(cls):
        cls.issuer.stop()
        cls.directory.cleanup()

    def post(self, path, form=None, json_body=None):
        if json_body is not None:
            request = urllib.request.Request(self.issuer.url + path, data=json.dumps(json_body).encode(),
                                             headers={"Content-Type": "application/json"})
        else:
            request = urllib.request.Request(self.issuer.url + path, data=urllib.parse.urlencode(form or {}).encode())
        try:
            with urllib.request.urlopen(request, timeout=10) as reply:
                return reply.status, json.load(reply)
        except urllib.error.HTTPError as error:
            return error.code, json.load(error)

    def client_credentials(self, client_id, secret):
        return self.post("/token", {"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret})

    def make_client(self):
        _, client = self.post("/sandbox/clients", json_body={"confidential": True, "auth_method": "client_secret_post",
                                                             "grant_types": ["client_credentials"]})
        return client["client_id"], client["client_secret"]

    def test_token_behaviour_fails_and_delays_one_client_only_and_is_counted(self):
        failing, failing_secret = self.make_client()
        other, other_secret = self.make_client()
        status, _ = self.post("/sandbox/token-behaviour", {"client_id": failing, "status": 503, "delay_ms": 300})
        self.assertEqual(status, 200)
        start = time.monotonic()
        status, body = self.client_credentials(failing, failing_secret)
        self.assertGreaterEqual(time.monotonic() - start, 0.25)
        self.assertEqual(status, 503)
        self.assertEqual(body["error"], "temporarily_unavailable")
        self.assertEqual(self.client_credentials(other, other_secret)[0], 200)
        with urllib.request.urlopen(f"{self.issuer.url}/sandbox/stats?client_id={failing}", timeout=10) as reply:
            self.assertEqual(json.load(reply)["token_requests"], 1)

        self.post("/sandbox/token-behaviour", {"client_id": failing, "status": 0, "delay_ms": 0})
        status, body = self.client_credentials(failing, failing_secret)
        self.assertEqual(status, 200)
        self.assertIn("access_token", body)

    def test_token_hold_waits_until_released(self):
        client, secret = self.make_client()
        status, _ = self.post("/sandbox/token-behaviour", {"client_id": client, "hold": 1})
        self.assertEqual(status, 200)
        answers = []
        waiting = threading.Thread(target=lambda: answers.append(self.client_credentials(client, secret)))
        waiting.start()
        waiting.join(1.0)
        self.assertTrue(waiting.is_alive(), "a held token request answered before its release")
        self.assertEqual(answers, [])
        self.assertEqual(self.post("/sandbox/token-release", {"client_id": client})[0], 200)
        waiting.join(10)
        self.assertFalse(waiting.is_alive())
        self.assertEqual(answers[0][0], 200)
        self.assertIn("access_token", answers[0][1])
        # Released for good: the next request answers at once, and there is nothing left to release.
        self.assertEqual(self.client_credentials(client, secret)[0], 200)
        self.assertEqual(self.post("/sandbox/token-release", {"client_id": client})[0], 400)

    def test_outage_lasts_while_the_file_exists(self):
        flag = os.path.join(self.directory.name, "outage-flag")
        with open(flag, "w"):
            pass
        status, _ = self.post("/sandbox/outage", {"seconds": 30, "while_exists": flag})
        self.assertEqual(status, 200)
        port = urllib.parse.urlsplit(self.issuer.url).port

        def listening():
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return True
            except OSError:
                return False
        deadline = time.monotonic() + 10
        while listening() and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertFalse(listening(), "the issuer never went down")
        time.sleep(0.5)
        self.assertFalse(listening(), "the issuer came back while the file existed")
        os.remove(flag)
        deadline = time.monotonic() + 10
        while not listening() and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertTrue(listening(), "the issuer did not come back once the file was gone")
        self.assertEqual(self.post("/sandbox/outage", {"seconds": 5, "while_exists": "relative"})[0], 400)

    def test_token_behaviour_refuses_bad_values(self):
        for form in ({"status": 503}, {"client_id": "x", "status": 200}, {"client_id": "x", "delay_ms": 70000},
                     {"client_id": "x", "delay_ms": "soon"}, {"client_id": "x", "hold": 2}):
            self.assertEqual(self.post("/sandbox/token-behaviour", form)[0], 400, form)

    def test_a_tenant_serves_a_discovery_document_with_its_own_issuer_and_endpoints(self):
        status, tenant = self.post("/sandbox/tenants", json_body={"endpoints": {"token_endpoint": "http://token.example.invalid/token"}})
        self.assertEqual(status, 200)
        self.assertTrue(tenant["issuer"].startswith(self.issuer.url + "/tenants/t-"))
        with urllib.request.urlopen(tenant["issuer"] + "/.well-known/openid-configuration", timeout=10) as reply:
            document = json.load(reply)
        self.assertEqual(document["issuer"], tenant["issuer"])
        self.assertEqual(document["token_endpoint"], "http://token.example.invalid/token")
        self.assertEqual(document["revocation_endpoint"], self.issuer.url + "/revoke")
        with self.assertRaises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(self.issuer.url + "/tenants/t-000000000000/.well-known/openid-configuration", timeout=10)
        self.assertEqual(missing.exception.code, 404)
        missing.exception.close()
        self.assertEqual(self.post("/sandbox/tenants", json_body={"endpoints": {"token_endpoint": 5}})[0], 400)


if __name__ == "__main__":
    unittest.main()
