"""Self-test of the sandbox's IAM Credentials emulator and its ID tokens: who may impersonate
whom, lifetimes, the metadata server's identity endpoint, the token endpoint's target_audience
grant, and the gRPC test service's ID-token check. google-auth plays the client.

    .venv/bin/python -m unittest discover -s Examples/Sandbox -p 'test_impersonation.py'
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import google.auth.transport.requests
import grpc
from google.oauth2 import service_account

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import test_service  # noqa: E402
from test_google_credentials import http  # noqa: E402
from test_sandbox import SandboxProcess, bearer  # noqa: E402

CHECK = os.path.join(HERE, "google_auth_check.py")
pb = pbg = None
_generated_dir = None


def setUpModule():
    global pb, pbg, _generated_dir
    _generated_dir = tempfile.mkdtemp(prefix="sandbox-test-protos-")
    pb, pbg = test_service.load_protos(_generated_dir)


def tearDownModule():
    shutil.rmtree(_generated_dir, ignore_errors=True)


class ImpersonationTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sandbox = SandboxProcess()
        try:
            cls.info = cls.sandbox.wait_ready()
        except BaseException:
            cls.sandbox.close()
            raise
        with open(cls.info["ca_cert"], "rb") as handle:
            credentials = grpc.ssl_channel_credentials(root_certificates=handle.read())
        cls.channel = grpc.secure_channel(f"127.0.0.1:{cls.info['grpc_tls_port']}", credentials)
        cls.tls = pbg.TestServiceStub(cls.channel)
        source = service_account.Credentials.from_service_account_file(
            cls.info["service_account_key"], scopes=["https://www.googleapis.com/auth/cloud-platform"])
        # google-auth's assertions name Google's token endpoint; the sandbox issuer takes only its own.
        google_endpoint = service_account._GOOGLE_OAUTH2_TOKEN_ENDPOINT
        service_account._GOOGLE_OAUTH2_TOKEN_ENDPOINT = cls.info["token_endpoint"]
        try:
            source.refresh(google.auth.transport.requests.Request())
        finally:
            service_account._GOOGLE_OAUTH2_TOKEN_ENDPOINT = google_endpoint
        cls.source_token = source.token

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()
        cls.sandbox.close()

    def iam(self, target, method, body, token=None):
        url = f"{self.info['iam_endpoint']}/v1/projects/-/serviceAccounts/{target}:{method}"
        headers = {"Content-Type": "application/json"}
        if token is not False:
            headers["Authorization"] = f"Bearer {token or self.source_token}"
        status, _, data = http("POST", url, json.dumps(body).encode(), headers)
        return status, json.loads(data)

    def call(self, token):
        response = self.tls.UnaryCall(pb.SimpleRequest(fill_username=True), metadata=bearer(token), timeout=10)
        return response.username

    def check(self, *arguments):
        environment = dict(os.environ, GCE_METADATA_HOST=self.info["metadata_host"])
        completed = subprocess.run([sys.executable, CHECK, *arguments], capture_output=True, text=True,
                                   timeout=60, env=environment)
        self.assertEqual(completed.returncode, 0, completed.stderr)
        return json.loads(completed.stdout)

    def test_generate_access_token_gives_a_token_the_service_accepts_as_the_target(self):
        status, answer = self.iam(self.info["impersonation_target"], "generateAccessToken",
                                  {"scope": [self.info["scope"]], "lifetime": "600s"})
        self.assertEqual(status, 200, answer)
        self.assertRegex(answer["expireTime"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        self.assertEqual(self.call(answer["accessToken"]), self.info["impersonation_target"])

    def test_the_caller_must_send_a_token_the_sandbox_issued(self):
        for token in (False, "not-a-token"):
            status, answer = self.iam(self.info["impersonation_target"], "generateAccessToken",
                                      {"scope": [self.info["scope"]]}, token=token)
            self.assertEqual((status, answer["error"]["status"]), (401, "UNAUTHENTICATED"))

    def test_every_link_of_the_chain_needs_the_token_creator_role(self):
        status, answer = self.iam(self.info["impersonation_forbidden"], "generateAccessToken",
                                  {"scope": [self.info["scope"]]})
        self.assertEqual((status, answer["error"]["status"]), (403, "PERMISSION_DENIED"))
        delegate = f"projects/-/serviceAccounts/{self.info['impersonation_delegate']}"
        status, _ = self.iam(self.info["impersonation_target"], "generateAccessToken",
                             {"scope": [self.info["scope"]], "delegates": [delegate]})
        self.assertEqual(status, 200)
        # The target may not impersonate the delegate, so a chain through the target breaks.
        status, answer = self.iam(self.info["impersonation_delegate"], "generateAccessToken",
                                  {"scope": [self.info["scope"]],
                                   "delegates": [f"projects/-/serviceAccounts/{self.info['impersonation_target']}"]})
        self.assertEqual((status, answer["error"]["status"]), (403, "PERMISSION_DENIED"))
        status, answer = self.iam("nobody@sandbox-project.iam.gserviceaccount.com", "generateAccessToken",
                                  {"scope": [self.info["scope"]]})
        self.assertEqual((status, answer["error"]["status"]), (404, "NOT_FOUND"))

    def test_lifetime_and_scope_are_checked(self):
        for body in ({"scope": [self.info["scope"]], "lifetime": "3601s"},
                     {"scope": [self.info["scope"]], "lifetime": "0s"},
                     {"scope": [self.info["scope"]], "lifetime": "an hour"},
                     {"scope": []}):
            status, answer = self.iam(self.info["impersonation_target"], "generateAccessToken", body)
            self.assertEqual((status, answer["error"]["status"]), (400, "INVALID_ARGUMENT"), body)

    def test_generate_id_token_is_accepted_for_the_audience_only(self):
        status, answer = self.iam(self.info["impersonation_target"], "generateIdToken",
                                  {"audience": self.info["id_token_audience"], "includeEmail": True})
        self.assertEqual(status, 200, answer)
        self.assertEqual(self.call(answer["token"]), self.info["impersonation_target"])
        status, answer = self.iam(self.info["impersonation_target"], "generateIdToken",
                                  {"audience": "https://another-service.a.run.app"})
        with self.assertRaises(grpc.RpcError) as caught:
            self.call(answer["token"])
        self.assertEqual(caught.exception.code(), grpc.StatusCode.UNAUTHENTICATED)

    def test_a_forged_id_token_is_refused(self):
        status, answer = self.iam(self.info["impersonation_target"], "generateIdToken",
                                  {"audience": self.info["id_token_audience"]})
        header, payload, signature = answer["token"].split(".")
        forged = f"{header}.{payload}.{signature[:-4]}AAAA"
        with self.assertRaises(grpc.RpcError) as caught:
            self.call(forged)
        self.assertEqual(caught.exception.code(), grpc.StatusCode.UNAUTHENTICATED)

    def test_metadata_identity_needs_the_flavor_and_an_audience(self):
        base = f"http://{self.info['metadata_host']}/computeMetadata/v1/instance/service-accounts/default/identity"
        status, _, _ = http("GET", base + "?audience=x")
        self.assertEqual(status, 403)
        status, _, _ = http("GET", base, headers={"Metadata-Flavor": "Google"})
        self.assertEqual(status, 400)
        status, headers, body = http("GET", base + "?audience=" + self.info["id_token_audience"] + "&format=full",
                                     headers={"Metadata-Flavor": "Google"})
        self.assertEqual((status, headers["Metadata-Flavor"]), (200, "Google"))
        self.assertEqual(self.call(body.decode()), self.info["metadata_email"])

    def test_google_auth_gets_id_tokens_from_all_three_places(self):
        audience = self.info["id_token_audience"]
        key = self.check("id-token", "--audience", audience, "--key", self.info["service_account_key"])
        metadata = self.check("id-token", "--audience", audience, "--metadata")
        impersonated = self.check("id-token", "--audience", audience, "--impersonate",
                                  self.info["impersonation_target"], "--iam-endpoint", self.info["iam_endpoint"],
                                  "--source-key", self.info["service_account_key"])
        self.assertEqual([result["claims"]["email"] for result in (key, metadata, impersonated)],
                         [self.info["service_account_email"], self.info["metadata_email"],
                          self.info["impersonation_target"]])
        for result in (key, metadata, impersonated):
            self.assertEqual(result["claims"]["aud"], audience)
            self.assertAlmostEqual(result["claims"]["exp"] - time.time(), 3600, delta=120)

    def test_google_auth_impersonates_through_a_delegate(self):
        result = self.check("impersonate", "--iam-endpoint", self.info["iam_endpoint"],
                            "--source-key", self.info["service_account_key"],
                            "--target", self.info["impersonation_target"],
                            "--delegate", f"projects/-/serviceAccounts/{self.info['impersonation_delegate']}",
                            "--scope", self.info["scope"], "--lifetime", "900")
        self.assertIn("expiry", result)
        status, _, data = http("GET", f"{self.info['iam_endpoint']}/sandbox/requests")
        last = json.loads(data)[-1]
        self.assertEqual(last["body"]["lifetime"], "900s")
        self.assertEqual(last["caller"], self.info["service_account_email"])

    def test_adc_file_is_gclouds_impersonated_service_account(self):
        with open(self.info["impersonated_adc_file"]) as handle:
            document = json.load(handle)
        self.assertEqual(set(document), {"delegates", "service_account_impersonation_url", "source_credentials", "type"})
        self.assertEqual(document["source_credentials"]["type"], "authorized_user")
        environment = dict(os.environ, GOOGLE_APPLICATION_CREDENTIALS=self.info["impersonated_adc_file"])
        completed = subprocess.run([sys.executable, CHECK, "adc"], capture_output=True, text=True, timeout=60,
                                   env=environment)
        result = json.loads(completed.stdout)
        self.assertEqual((result["type"], result["principal"], result["source_type"]),
                         ("impersonated_service_account", self.info["impersonation_target"], "authorized_user"))


if __name__ == "__main__":
    unittest.main()
