"""Self-test of the workload identity federation peers (OIDC provider, STS emulator, AWS emulator,
executable source), driven by google-auth's own external_account credentials: the reference
implementation must get tokens from them, and their refusals must be the ones documented.

    .venv/bin/python -m unittest discover -s Examples/Sandbox -p 'test_federation_peers.py'
"""

import json
import os
import sys
import tempfile
import unittest
import urllib.error
import urllib.request
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
from test_sandbox import SandboxProcess  # noqa: E402

sandbox = None
# The Security Token Service requires a scope; google-auth sends one only when given.
CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform"


def setUpModule():
    global sandbox
    sandbox = SandboxProcess()
    sandbox.wait_ready()


def tearDownModule():
    if sandbox is not None:
        sandbox.close()


def post_json(url, document):
    request = urllib.request.Request(url, data=json.dumps(document).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.load(answer)


def get_json(url):
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.load(answer)


class FederationPeersTest(unittest.TestCase):
    def setUp(self):
        from google.auth import aws, identity_pool  # imported late: google_auth_check's rules do not apply here
        from google.auth.transport.requests import Request
        self.aws, self.identity_pool, self.request = aws, identity_pool, Request()
        self.info = sandbox.info
        self.pool = "p" + uuid.uuid4().hex[:10]
        self.directory = tempfile.mkdtemp(prefix="federation-test-")

    def audience(self, provider):
        return (f"//iam.googleapis.com/projects/{self.info['sts_project_number']}/locations/global/"
                f"workloadIdentityPools/{self.pool}/providers/{provider}")

    def mint(self, audience, **extra):
        return post_json(self.info["oidc_issuer"] + "/sandbox/mint",
                         {"sub": "repo:octo/repo", "audience": "https:" + audience, **extra})["token"]

    def recorded(self, audience):
        query = urllib.parse.urlencode({"audience": audience})
        return get_json(f"{self.info['sts_url']}/sandbox/requests?{query}")["requests"]

    def file_credentials(self, audience, token):
        path = os.path.join(self.directory, "token")
        with open(path, "w") as handle:
            handle.write(token)
        return self.identity_pool.Credentials.from_info({
            "type": "external_account", "audience": audience,
            "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
            "token_url": self.info["sts_token_url"], "credential_source": {"file": path},
        }, scopes=[CLOUD_PLATFORM])

    def test_google_auth_exchanges_a_file_token(self):
        audience = self.audience("github")
        credentials = self.file_credentials(audience, self.mint(audience))
        credentials.refresh(self.request)
        self.assertTrue(credentials.token)
        [record] = self.recorded(audience)
        form = record["form"]
        self.assertEqual(form["grant_type"], "urn:ietf:params:oauth:grant-type:token-exchange")
        self.assertEqual(form["requested_token_type"], "urn:ietf:params:oauth:token-type:access_token")
        self.assertEqual(form["audience"], audience)

    def test_sts_refuses_a_token_for_another_audience_or_expired(self):
        audience = self.audience("github")
        for token in (self.mint(self.audience("other")), self.mint(audience, expired=True)):
            credentials = self.file_credentials(audience, token)
            with self.assertRaises(Exception) as raised:
                credentials.refresh(self.request)
            self.assertIn("invalid_grant", str(raised.exception))

    def test_sts_refuses_a_token_signed_by_another_key(self):
        from cryptography.hazmat.primitives.asymmetric import rsa
        import jwt
        audience = self.audience("github")
        good = jwt.decode(self.mint(audience), options={"verify_signature": False})
        header = jwt.get_unverified_header(self.mint(audience))
        forged = jwt.encode(good, rsa.generate_private_key(public_exponent=65537, key_size=2048),
                            algorithm="RS256", headers={"kid": header["kid"]})
        with self.assertRaises(Exception) as raised:
            self.file_credentials(audience, forged).refresh(self.request)
        self.assertIn("invalid_grant", str(raised.exception))

    def test_github_url_source_needs_the_bearer_request_token(self):
        audience = self.audience("github")
        url = self.info["actions_id_token_request_url"] + "&audience=" + urllib.parse.quote("https:" + audience)
        info = {
            "type": "external_account", "audience": audience,
            "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
            "token_url": self.info["sts_token_url"],
            "credential_source": {
                "url": url,
                "headers": {"Authorization": "Bearer " + self.info["actions_id_token_request_token"]},
                "format": {"type": "json", "subject_token_field_name": "value"},
            },
        }
        credentials = self.identity_pool.Credentials.from_info(info, scopes=[CLOUD_PLATFORM])
        credentials.refresh(self.request)
        self.assertTrue(credentials.token)
        info["credential_source"]["headers"]["Authorization"] = "Bearer wrong"
        with self.assertRaises(Exception):
            self.identity_pool.Credentials.from_info(info, scopes=[CLOUD_PLATFORM]).refresh(self.request)

    def test_google_auth_aws_source_with_imdsv2_is_verified_by_botocore(self):
        audience = self.audience("aws-prod")
        aws_url = self.info["aws_url"]
        credentials = self.aws.Credentials.from_info({
            "type": "external_account", "audience": audience,
            "subject_token_type": "urn:ietf:params:aws:token-type:aws4_request",
            "token_url": self.info["sts_token_url"],
            "credential_source": {
                "environment_id": "aws1",
                "region_url": aws_url + "/latest/meta-data/placement/availability-zone",
                "url": aws_url + "/latest/meta-data/iam/security-credentials",
                "regional_cred_verification_url": "https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15",
                "imdsv2_session_token_url": aws_url + "/latest/api/token",
            },
        }, scopes=[CLOUD_PLATFORM])
        saved = {name: os.environ.pop(name, None) for name in
                 ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")}
        try:
            credentials.refresh(self.request)
        finally:
            os.environ.update({name: value for name, value in saved.items() if value is not None})
        self.assertTrue(credentials.token)
        [record] = self.recorded(audience)
        self.assertEqual(record["form"]["subject_token_type"], "urn:ietf:params:aws:token-type:aws4_request")

    def test_aws_emulator_refuses_a_tampered_signature(self):
        audience = self.audience("aws-prod")
        keys = post_json(self.info["aws_url"] + "/sandbox/keys", {"temporary": False})
        keys["secret_access_key"] = keys["secret_access_key"][:-1] + ("A" if keys["secret_access_key"][-1] != "A" else "B")
        saved = {name: os.environ.get(name) for name in ("AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
        os.environ.update(AWS_REGION=self.info["aws_region"], AWS_ACCESS_KEY_ID=keys["access_key_id"],
                          AWS_SECRET_ACCESS_KEY=keys["secret_access_key"])
        try:
            credentials = self.aws.Credentials.from_info({
                "type": "external_account", "audience": audience,
                "subject_token_type": "urn:ietf:params:aws:token-type:aws4_request",
                "token_url": self.info["sts_token_url"],
                "credential_source": {
                    "environment_id": "aws1",
                    "regional_cred_verification_url": "https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15",
                },
            }, scopes=[CLOUD_PLATFORM])
            with self.assertRaises(Exception) as raised:
                credentials.refresh(self.request)
            self.assertIn("invalid_grant", str(raised.exception))
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


if __name__ == "__main__":
    unittest.main()
