"""Self-test of the sandbox's Google credentials: the service-account key file, the JWT bearer
grant at the issuer, self-signed JWTs at the gRPC test service, the metadata-server emulator,
the authorized_user file, and google_auth_check.py. Google's own client library (google-auth)
plays the client wherever it can, so the sandbox is checked against the reference.

    .venv/bin/python -m unittest discover -s Examples/Sandbox -p 'test_google_credentials.py'
"""

import base64
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

import google.auth.transport.requests
import grpc
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from google.auth import jwt as google_jwt
from google.oauth2 import credentials as user_credentials
from google.oauth2 import service_account

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import test_service  # noqa: E402
from test_sandbox import SandboxProcess, bearer  # noqa: E402

CHECK = os.path.join(HERE, "google_auth_check.py")
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
GOOGLE_KEY_FIELDS = {
    "type", "project_id", "private_key_id", "private_key", "client_email", "client_id", "auth_uri",
    "token_uri", "auth_provider_x509_cert_url", "client_x509_cert_url", "universe_domain",
}

pb = pbg = None
_generated_dir = None


def setUpModule():
    global pb, pbg, _generated_dir
    _generated_dir = tempfile.mkdtemp(prefix="sandbox-test-protos-")
    pb, pbg = test_service.load_protos(_generated_dir)


def tearDownModule():
    shutil.rmtree(_generated_dir, ignore_errors=True)


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def sign_jwt(private_key, header, claims):
    """A compact JWS signed RS256 with `private_key` (a cryptography key), header as given."""
    signing_input = f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(claims).encode())}"
    signature = private_key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{signing_input}.{b64url(signature)}"


def http(method, url, data=None, headers=None):
    """(status, headers, body) for one request; HTTP errors are answers, not exceptions."""
    request = urllib.request.Request(url, data=data, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, reply.headers, reply.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


class GoogleCredentialsTests(unittest.TestCase):
    """One sandbox for the class; tests that turn a knob on the metadata server turn it back."""

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
        with open(cls.info["service_account_key"]) as handle:
            cls.key = json.load(handle)
        cls.private_key = serialization.load_pem_private_key(cls.key["private_key"].encode(), None)
        cls.request = google.auth.transport.requests.Request()
        cls.metadata_url = f"http://{cls.info['metadata_host']}"

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()
        cls.sandbox.close()

    def call(self, token):
        """UnaryCall on the TLS port with `token`; returns (username, oauth_scope)."""
        response = self.tls.UnaryCall(pb.SimpleRequest(fill_username=True, fill_oauth_scope=True),
                                      metadata=bearer(token), timeout=10)
        return response.username, response.oauth_scope

    def assertUnauthenticated(self, token):
        with self.assertRaises(grpc.RpcError) as caught:
            self.call(token)
        self.assertEqual(caught.exception.code(), grpc.StatusCode.UNAUTHENTICATED, caught.exception.details())

    def grant(self, assertion):
        form = urllib.parse.urlencode({"grant_type": JWT_BEARER, "assertion": assertion}).encode()
        status, _, body = http("POST", self.key["token_uri"], form,
                               {"Content-Type": "application/x-www-form-urlencoded"})
        return status, json.loads(body)

    def assertion_claims(self, **changes):
        now = int(time.time())
        claims = {"iss": self.key["client_email"], "aud": self.key["token_uri"], "iat": now, "exp": now + 3600,
                  "scope": self.info["scope"]}
        claims.update(changes)
        return {name: value for name, value in claims.items() if value is not None}

    def header(self, **changes):
        header = {"alg": "RS256", "typ": "JWT", "kid": self.key["private_key_id"]}
        header.update(changes)
        return {name: value for name, value in header.items() if value is not None}

    # -- the key file ---------------------------------------------------------------------------

    def test_key_file_is_in_googles_format(self):
        self.assertEqual(set(self.key), GOOGLE_KEY_FIELDS)
        self.assertEqual(self.key["type"], "service_account")
        self.assertEqual(self.key["client_email"], self.info["service_account_email"])
        self.assertRegex(self.key["client_email"], r"^[a-z0-9-]+@[a-z0-9-]+\.iam\.gserviceaccount\.com$")
        self.assertRegex(self.key["private_key_id"], r"^[0-9a-f]{40}$")
        self.assertRegex(self.key["client_id"], r"^[0-9]{21}$")
        self.assertTrue(self.key["private_key"].startswith("-----BEGIN PRIVATE KEY-----\n"))
        self.assertTrue(self.key["private_key"].endswith("-----END PRIVATE KEY-----\n"))
        self.assertIsInstance(self.private_key, rsa.RSAPrivateKey)
        self.assertEqual(self.private_key.key_size, 2048)
        self.assertEqual(self.key["token_uri"], self.info["issuer"] + "/token")
        self.assertEqual(stat.S_IMODE(os.stat(self.info["service_account_key"]).st_mode), 0o600)
        # google-auth reads it as a service account.
        credentials = service_account.Credentials.from_service_account_file(self.info["service_account_key"])
        self.assertEqual(credentials.service_account_email, self.key["client_email"])

    def test_certificate_is_the_keys_public_half(self):
        with open(self.info["service_account_cert"]) as handle:
            certificate = handle.read()
        now = int(time.time())
        token = sign_jwt(self.private_key, self.header(), {"iss": "x", "aud": "y", "iat": now, "exp": now + 60})
        self.assertEqual(google_jwt.decode(token, certs=certificate, audience="y")["iss"], "x")
        # Also served where client_x509_cert_url says, in Google's {kid: certificate} form.
        status, _, body = http("GET", self.key["client_x509_cert_url"])
        self.assertEqual(status, 200)
        self.assertEqual(json.loads(body), {self.key["private_key_id"]: certificate})

    def test_every_run_has_a_fresh_key(self):
        other = SandboxProcess()
        try:
            with open(other.wait_ready()["service_account_key"]) as handle:
                second = json.load(handle)
        finally:
            other.close()
        self.assertNotEqual(second["private_key"], self.key["private_key"])
        self.assertNotEqual(second["private_key_id"], self.key["private_key_id"])

    # -- the JWT bearer grant -------------------------------------------------------------------

    def test_google_auth_service_account_gets_a_token_the_service_accepts(self):
        # google-auth always sends Google's audience; the sandbox wants its own token endpoint.
        credentials = service_account.Credentials.from_service_account_file(
            self.info["service_account_key"], scopes=[self.info["scope"]],
            additional_claims={"aud": self.key["token_uri"]})
        credentials.refresh(self.request)
        self.assertEqual(self.call(credentials.token), (self.key["client_email"], self.info["scope"]))
        self.assertNotIn(credentials.token, self.sandbox.log())

    def test_subject_is_honoured_for_domain_wide_delegation(self):
        credentials = service_account.Credentials.from_service_account_file(
            self.info["service_account_key"], scopes=[self.info["scope"]], subject=self.info["user"],
            additional_claims={"aud": self.key["token_uri"]})
        credentials.refresh(self.request)
        self.assertEqual(self.call(credentials.token)[0], self.info["user"])

    def test_a_good_assertion_is_granted_and_counted(self):
        status, token = self.grant(sign_jwt(self.private_key, self.header(), self.assertion_claims()))
        self.assertEqual(status, 200, token)
        self.assertEqual(token["token_type"], "Bearer")
        self.assertNotIn("refresh_token", token)
        self.assertEqual(token["scope"], self.info["scope"])
        status, _, body = http("GET", f"{self.info['issuer']}/sandbox/stats?client_id={urllib.parse.quote(self.key['client_email'])}")
        self.assertGreaterEqual(json.loads(body)["jwt_bearer_requests"], 1)

    def test_access_tokens_lists_what_the_account_was_given(self):
        status, token = self.grant(sign_jwt(self.private_key, self.header(), self.assertion_claims()))
        self.assertEqual(status, 200, token)
        query = urllib.parse.urlencode({"client_id": self.key["client_email"]})
        status, _, body = http("GET", f"{self.info['issuer']}/sandbox/access-tokens?{query}")
        self.assertEqual(status, 200, body)
        self.assertIn(token["access_token"], json.loads(body)["access_tokens"])
        status, _, body = http("GET", f"{self.info['issuer']}/sandbox/access-tokens?client_id=nobody")
        self.assertEqual((status, json.loads(body)), (200, {"access_tokens": []}))
        status, _, _ = http("GET", f"{self.info['issuer']}/sandbox/access-tokens")
        self.assertEqual(status, 400)

    def test_bad_assertions_are_refused(self):
        other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        now = int(time.time())
        cases = {
            "google's audience, not this token endpoint": (self.private_key, self.header(),
                self.assertion_claims(aud="https://oauth2.googleapis.com/token"), "invalid_grant"),
            "expired": (self.private_key, self.header(), self.assertion_claims(iat=now - 7200, exp=now - 3600), "invalid_grant"),
            "issued in the future": (self.private_key, self.header(), self.assertion_claims(iat=now + 600, exp=now + 1200), "invalid_grant"),
            "lives longer than an hour": (self.private_key, self.header(), self.assertion_claims(exp=now + 7200), "invalid_grant"),
            "no iat": (self.private_key, self.header(), self.assertion_claims(iat=None), "invalid_grant"),
            "signed with another key": (other_key, self.header(), self.assertion_claims(), "invalid_grant"),
            "another kid": (self.private_key, self.header(kid="0" * 40), self.assertion_claims(), "invalid_grant"),
            "not RS256": (self.private_key, self.header(alg="RS512"), self.assertion_claims(), "invalid_grant"),
            "unknown issuer": (self.private_key, self.header(), self.assertion_claims(iss="nobody@sandbox-project.iam.gserviceaccount.com"), "invalid_grant"),
            "unknown subject": (self.private_key, self.header(), self.assertion_claims(sub="stranger@example.com"), "invalid_grant"),
            "no scope": (self.private_key, self.header(), self.assertion_claims(scope=None), "invalid_scope"),
        }
        for name, (key, header, claims, error) in cases.items():
            with self.subTest(name):
                assertion = sign_jwt(key, header, claims)
                status, body = self.grant(assertion)
                self.assertEqual(status, 400, body)
                self.assertEqual(body.get("error"), error, body)
                self.assertNotIn(assertion, self.sandbox.log())

    def test_a_new_service_account_on_request(self):
        status, _, body = http("POST", self.info["issuer"] + "/sandbox/service-accounts", b"{}",
                               {"Content-Type": "application/json"})
        self.assertEqual(status, 200)
        key = json.loads(body)
        self.assertEqual(set(key), GOOGLE_KEY_FIELDS)
        self.assertNotEqual(key["client_email"], self.key["client_email"])
        credentials = service_account.Credentials.from_service_account_info(
            key, scopes=[self.info["scope"]], additional_claims={"aud": key["token_uri"]})
        credentials.refresh(self.request)
        self.assertEqual(self.call(credentials.token)[0], key["client_email"])

    # -- self-signed JWTs at the gRPC service ---------------------------------------------------

    def test_google_auth_self_signed_jwt_is_accepted_for_each_served_host(self):
        for audience in self.info["jwt_audiences"]:
            with self.subTest(audience):
                credentials = google_jwt.Credentials.from_service_account_file(
                    self.info["service_account_key"], audience=audience)
                credentials.refresh(self.request)
                token = credentials.token.decode() if isinstance(credentials.token, bytes) else credentials.token
                self.assertEqual(self.call(token), (self.key["client_email"], ""))
        self.assertEqual(self.info["jwt_audiences"],
                         ["https://127.0.0.1/", "https://alias.sandbox.test/", "https://localhost/"])

    def test_self_signed_jwt_with_a_scope_claim_and_no_audience(self):
        credentials = google_jwt.Credentials.from_service_account_file(
            self.info["service_account_key"], audience=None, additional_claims={"scope": self.info["scope"]})
        credentials.refresh(self.request)
        token = credentials.token.decode() if isinstance(credentials.token, bytes) else credentials.token
        self.assertEqual(self.call(token), (self.key["client_email"], self.info["scope"]))

    def test_bad_self_signed_jwts_are_unauthenticated(self):
        other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        now = int(time.time())
        email = self.key["client_email"]

        def claims(**changes):
            values = {"iss": email, "sub": email, "aud": "https://localhost/", "iat": now, "exp": now + 3600}
            values.update(changes)
            return {name: value for name, value in values.items() if value is not None}

        cases = {
            "another host": (self.private_key, self.header(), claims(aud="https://pubsub.googleapis.com/")),
            "a path in the audience": (self.private_key, self.header(), claims(aud="https://localhost/grpc.testing.TestService")),
            "neither aud nor scope": (self.private_key, self.header(), claims(aud=None)),
            "expired": (self.private_key, self.header(), claims(iat=now - 7200, exp=now - 3600)),
            "lives longer than an hour": (self.private_key, self.header(), claims(exp=now + 7200)),
            "issued in the future": (self.private_key, self.header(), claims(iat=now + 600, exp=now + 1200)),
            "signed with another key": (other_key, self.header(), claims()),
            "another kid": (self.private_key, self.header(kid="f" * 40), claims()),
            "sub is not the account": (self.private_key, self.header(), claims(sub="someone@example.com")),
            "unknown account": (self.private_key, self.header(), claims(iss="x@sandbox-project.iam.gserviceaccount.com")),
        }
        for name, (key, header, values) in cases.items():
            with self.subTest(name):
                token = sign_jwt(key, header, values)
                self.assertUnauthenticated(token)
                self.assertNotIn(token, self.sandbox.log())
        # The control: the same construction, nothing wrong, is accepted; without a kid too (the
        # account's key is tried, as Google does with keys that have no private_key_id).
        self.assertEqual(self.call(sign_jwt(self.private_key, self.header(), claims()))[0], email)
        self.assertEqual(self.call(sign_jwt(self.private_key, self.header(kid=None), claims()))[0], email)

    def test_each_distinct_self_signed_jwt_is_counted_under_its_account_and_audience(self):
        status, _, body = http("POST", self.info["issuer"] + "/sandbox/service-accounts", b"{}",
                               {"Content-Type": "application/json"})
        self.assertEqual(status, 200)
        key = json.loads(body)
        private_key = serialization.load_pem_private_key(key["private_key"].encode(), None)
        email, now = key["client_email"], int(time.time())
        header = {"alg": "RS256", "typ": "JWT", "kid": key["private_key_id"]}

        def token(**claims):
            values = {"iss": email, "sub": email, "iat": now, "exp": now + 3600}
            values.update(claims)
            return sign_jwt(private_key, header, values)

        localhost, loopback = token(aud="https://localhost/"), token(aud="https://127.0.0.1/")
        scoped = token(scope=self.info["scope"])
        for jwt in (localhost, localhost, loopback, scoped, scoped):
            self.assertEqual(self.call(jwt)[0], email)
        self.assertUnauthenticated(token(aud="https://pubsub.googleapis.com/"))  # refused: not counted
        status, _, body = http("GET", self.info["issuer"] + "/sandbox/stats?" + urllib.parse.urlencode({"client_id": email}))
        self.assertEqual(json.loads(body), {"jwt_access_tokens": 3, "jwt_access_tokens https://localhost/": 1,
                                            "jwt_access_tokens https://127.0.0.1/": 1, "jwt_access_tokens scope": 1})

    def test_token_lifetime_knob_changes_what_a_client_gets_next(self):
        status, _, body = http("POST", self.info["issuer"] + "/sandbox/service-accounts", b"{}",
                               {"Content-Type": "application/json"})
        key = json.loads(body)
        private_key = serialization.load_pem_private_key(key["private_key"].encode(), None)
        now = int(time.time())

        def granted_lifetime():
            assertion = sign_jwt(private_key, {"alg": "RS256", "typ": "JWT", "kid": key["private_key_id"]},
                                 {"iss": key["client_email"], "aud": key["token_uri"], "iat": now, "exp": now + 3600,
                                  "scope": self.info["scope"]})
            form = urllib.parse.urlencode({"grant_type": JWT_BEARER, "assertion": assertion}).encode()
            status, _, body = http("POST", key["token_uri"], form, {"Content-Type": "application/x-www-form-urlencoded"})
            self.assertEqual(status, 200, body)
            return json.loads(body)["expires_in"]

        def knob(client_id, lifetime):
            form = urllib.parse.urlencode({"client_id": client_id, "token_lifetime": lifetime}).encode()
            return http("POST", self.info["issuer"] + "/sandbox/token-lifetime", form,
                        {"Content-Type": "application/x-www-form-urlencoded"})[0]

        self.assertEqual(granted_lifetime(), 3600)
        self.assertEqual(knob(key["client_email"], 7), 200)
        self.assertEqual(granted_lifetime(), 7)
        self.assertEqual(knob(key["client_email"], 3600), 200)
        self.assertEqual(granted_lifetime(), 3600)
        self.assertEqual(knob("nobody", 7), 404)
        self.assertEqual(knob(key["client_email"], 0), 400)
        self.assertEqual(knob(key["client_email"], "x"), 400)

    def test_the_quota_project_sent_comes_back_in_the_trailers(self):
        token = self.metadata_token()
        metadata = bearer(token) + (("x-sandbox-echo-headers", "1"), ("x-goog-user-project", "billed-project"))
        _, call = self.tls.UnaryCall.with_call(pb.SimpleRequest(fill_username=True), metadata=metadata, timeout=10)
        self.assertIn(("x-sandbox-user-project", "billed-project"), tuple(call.trailing_metadata()))
        _, call = self.tls.UnaryCall.with_call(pb.SimpleRequest(), metadata=bearer(token) + (("x-sandbox-echo-headers", "1"),), timeout=10)
        self.assertNotIn("x-sandbox-user-project", [key for key, _ in call.trailing_metadata()])

    def metadata_token(self):
        status, _, body = self.metadata("/computeMetadata/v1/instance/service-accounts/default/token")
        self.assertEqual(status, 200)
        return json.loads(body)["access_token"]

    # -- the metadata server --------------------------------------------------------------------

    def metadata(self, path, flavor=True):
        headers = {"Metadata-Flavor": "Google"} if flavor else {}
        return http("GET", self.metadata_url + path, headers=headers)

    def metadata_knob(self, name, document):
        status, _, body = http("POST", f"{self.metadata_url}/sandbox/{name}", json.dumps(document).encode(),
                               {"Content-Type": "application/json"})
        self.assertEqual(status, 200, body)

    def test_metadata_requests_without_the_flavor_header_are_forbidden(self):
        status, headers, body = self.metadata("/computeMetadata/v1/instance/service-accounts/default/token", flavor=False)
        self.assertEqual(status, 403)
        self.assertIn(b"Metadata-Flavor", body)
        self.assertNotIn(b"access_token", body)
        status, headers, _ = self.metadata("/computeMetadata/v1/instance/service-accounts/default/token",
                                           flavor=False)
        status, _, body = http("GET", self.metadata_url + "/sandbox/stats")
        self.assertGreaterEqual(json.loads(body)["requests_without_flavor"], 2)

    def test_metadata_token_is_flavoured_and_accepted_by_the_service(self):
        status, headers, body = self.metadata("/computeMetadata/v1/instance/service-accounts/default/token")
        self.assertEqual(status, 200)
        self.assertEqual(headers["Metadata-Flavor"], "Google")
        token = json.loads(body)
        self.assertEqual(token["token_type"], "Bearer")
        self.assertGreater(token["expires_in"], 0)
        username, scope = self.call(token["access_token"])
        self.assertEqual(username, self.info["metadata_email"])
        self.assertIn(self.info["scope"], scope.split())
        self.assertNotIn(token["access_token"], self.sandbox.log())

    def test_metadata_token_scopes_parameter(self):
        scopes = urllib.parse.quote(f"{self.info['scope']},openid")
        status, _, body = self.metadata(f"/computeMetadata/v1/instance/service-accounts/default/token?scopes={scopes}")
        self.assertEqual(status, 200)
        self.assertEqual(self.call(json.loads(body)["access_token"])[1], f"{self.info['scope']} openid")

    def test_metadata_identity_paths(self):
        email = self.info["metadata_email"]
        self.assertEqual(self.metadata("/computeMetadata/v1/instance/service-accounts/default/email")[2].decode(), email)
        info = json.loads(self.metadata("/computeMetadata/v1/instance/service-accounts/default/?recursive=true")[2])
        self.assertEqual(info["email"], email)
        self.assertEqual(self.metadata("/computeMetadata/v1/project/project-id")[2].decode(), "sandbox-project")
        quoted = urllib.parse.quote(email)
        self.assertEqual(self.metadata(f"/computeMetadata/v1/instance/service-accounts/{quoted}/token")[0], 200)
        self.assertEqual(self.metadata("/computeMetadata/v1/instance/service-accounts/other@x/token")[0], 404)
        self.assertEqual(self.metadata("/computeMetadata/v1/instance/zone")[0], 404)

    def test_metadata_knobs_fail_tokens_and_omit_the_flavor(self):
        path = "/computeMetadata/v1/instance/service-accounts/default/token"
        self.metadata_knob("fail-tokens", {"status": 503, "count": 2})
        self.assertEqual([self.metadata(path)[0] for _ in range(3)], [503, 503, 200])
        self.metadata_knob("omit-flavor", {"enabled": True})
        try:
            status, headers, _ = self.metadata(path)
            self.assertEqual(status, 200)
            self.assertIsNone(headers.get("Metadata-Flavor"))
        finally:
            self.metadata_knob("omit-flavor", {"enabled": False})
        self.assertEqual(self.metadata(path)[1]["Metadata-Flavor"], "Google")
        status, _, _ = http("POST", f"{self.metadata_url}/sandbox/fail-tokens", b'{"status": 200}',
                            {"Content-Type": "application/json"})
        self.assertEqual(status, 400)

    def test_metadata_universe_domain_as_google_auth_reads_it(self):
        path = "/computeMetadata/v1/universe/universe-domain"
        environment = {"GCE_METADATA_HOST": self.info["metadata_host"], "GCE_METADATA_IP": self.info["metadata_host"]}

        def google_auth():
            completed = self.check("universe", environment=environment)
            self.assertEqual(completed.returncode, 0, completed.stderr)
            return json.loads(completed.stdout)

        self.assertEqual(self.metadata(path)[0], 404)  # a server that predates universes
        self.assertEqual(google_auth()["universe_domain"], "googleapis.com")
        self.metadata_knob("universe-domain", {"domain": "example-universe.test"})
        try:
            status, headers, body = self.metadata(path)
            self.assertEqual((status, headers["Metadata-Flavor"], body), (200, "Google", b"example-universe.test"))
            self.assertEqual(self.metadata(path, flavor=False)[0], 403)
            answer = google_auth()
            self.assertEqual(answer["type"], "google.auth.compute_engine.credentials.Credentials")
            self.assertEqual(answer["universe_domain"], "example-universe.test")
        finally:
            self.metadata_knob("universe-domain", {"domain": None})
        self.assertEqual(self.metadata(path)[0], 404)
        stats = json.loads(http("GET", self.metadata_url + "/sandbox/stats")[2])
        self.assertGreaterEqual(stats["universe_requests"], 5)
        status, _, _ = http("POST", f"{self.metadata_url}/sandbox/universe-domain", b'{"domain": 7}',
                            {"Content-Type": "application/json"})
        self.assertEqual(status, 400)

    # -- the authorized_user file ---------------------------------------------------------------

    def test_authorized_user_file_refreshes_as_the_sandbox_user_again_and_again(self):
        path = self.info["authorized_user_file"]
        with open(path) as handle:
            document = json.load(handle)
        self.assertEqual(set(document), {"account", "client_id", "client_secret", "refresh_token", "type",
                                         "universe_domain", "quota_project_id"})
        self.assertEqual(document["type"], "authorized_user")
        self.assertEqual(document["quota_project_id"], self.info["quota_project_id"])
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600)
        # google-auth always sends user credentials to Google's token endpoint, whatever a file
        # says; pointing them at the sandbox is the caller's choice.
        credentials = user_credentials.Credentials.from_authorized_user_file(path).with_token_uri(self.info["token_endpoint"])
        self.assertEqual(credentials.quota_project_id, self.info["quota_project_id"])
        tokens = []
        for _ in range(2):  # Google does not rotate refresh tokens: the file keeps working
            credentials.refresh(self.request)
            tokens.append(credentials.token)
            self.assertEqual(self.call(credentials.token)[0], self.info["user"])
        self.assertNotEqual(tokens[0], tokens[1])
        self.assertEqual(credentials.refresh_token, document["refresh_token"])

    def test_a_new_authorized_user_on_request(self):
        status, _, body = http("POST", self.info["issuer"] + "/sandbox/authorized-users",
                               json.dumps({"quota_project_id": "other-project"}).encode(),
                               {"Content-Type": "application/json"})
        self.assertEqual(status, 200)
        document = json.loads(body)
        self.assertEqual(document["quota_project_id"], "other-project")
        credentials = user_credentials.Credentials.from_authorized_user_info(document).with_token_uri(self.info["token_endpoint"])
        credentials.refresh(self.request)
        self.assertEqual(self.call(credentials.token)[0], self.info["user"])

    # -- google_auth_check.py -------------------------------------------------------------------

    def check(self, *arguments, environment=None, stdin=""):
        home = tempfile.mkdtemp(prefix="google-check-home-")
        self.addCleanup(shutil.rmtree, home, True)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home}
        env.update(environment or {})
        completed = subprocess.run([sys.executable, CHECK, *arguments], env=env, input=stdin,
                                   capture_output=True, text=True, timeout=60)
        return completed

    def test_check_resolves_each_kind_of_credential_like_google_auth(self):
        with open(self.info["authorized_user_file"]) as handle:
            user_client_id = json.load(handle)["client_id"]
        config = tempfile.mkdtemp(prefix="gcloud-config-")
        self.addCleanup(shutil.rmtree, config, True)
        shutil.copy(self.info["authorized_user_file"], os.path.join(config, "application_default_credentials.json"))
        metadata = {"GCE_METADATA_HOST": self.info["metadata_host"], "GCE_METADATA_IP": self.info["metadata_host"]}
        cases = [
            ({"GOOGLE_APPLICATION_CREDENTIALS": self.info["service_account_key"], "CLOUDSDK_CONFIG": config, **metadata},
             {"type": "service_account", "principal": self.key["client_email"], "quota_project_id": None}),
            ({"CLOUDSDK_CONFIG": config, **metadata},
             {"type": "authorized_user", "principal": user_client_id,
              "quota_project_id": self.info["quota_project_id"]}),
            (metadata, {"type": "compute_engine", "principal": self.info["metadata_email"], "quota_project_id": None}),
        ]
        for environment, expected in cases:
            with self.subTest(expected["type"]):
                completed = self.check("adc", environment=environment)
                self.assertEqual(completed.returncode, 0, completed.stderr)
                self.assertEqual(json.loads(completed.stdout), expected)

    def test_check_finds_nothing_without_credentials_and_never_leaves_loopback(self):
        completed = self.check("adc")
        self.assertEqual(completed.returncode, 0, completed.stderr)
        result = json.loads(completed.stdout)
        self.assertIsNone(result["type"])
        self.assertIn("default credentials", result["error"])
        for name, value in (("GCE_METADATA_IP", "169.254.169.254"), ("GCE_METADATA_HOST", "metadata.google.internal")):
            with self.subTest(name):
                refused = self.check("adc", environment={name: value})
                self.assertNotEqual(refused.returncode, 0)
                self.assertIn("not a loopback address", refused.stderr)

    def test_check_verifies_a_jwt_and_rejects_a_wrong_audience(self):
        now = int(time.time())
        email = self.key["client_email"]
        token = sign_jwt(self.private_key, self.header(),
                         {"iss": email, "sub": email, "aud": "https://localhost/", "iat": now, "exp": now + 3600})
        verified = self.check("verify-jwt", "--cert", self.info["service_account_cert"], "--audience", "https://localhost/", stdin=token)
        self.assertEqual(verified.returncode, 0, verified.stderr)
        result = json.loads(verified.stdout)
        self.assertEqual(result["header"], self.header())
        self.assertEqual(result["claims"]["iss"], email)
        wrong = self.check("verify-jwt", "--cert", self.info["service_account_cert"], "--audience", "https://other/", stdin=token)
        self.assertNotEqual(wrong.returncode, 0)
        self.assertRegex(wrong.stderr, re.compile("audience", re.IGNORECASE))


if __name__ == "__main__":
    unittest.main()
