"""`google_default` channel credentials to an xDS control plane, with grpcio (C-core) as the
reference client: the control plane serves ADS over TLS (a CA and certificate of the test's own)
and checks each stream's bearer token before it answers.

C-core's Google default credentials turn a service account's key file into self-signed JWTs
(audience: the ADS service's URL), so this control plane checks the JWT's signature against the
account's public key, its issuer and its audience. (Our client asks the token endpoint for an
access token instead, which the Swift test has the sandbox's issuer confirm.) grpcio keeps one
xDS client per process, so the client runs in a process of its own, with its own bootstrap,
credentials file and roots.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
import unittest
from concurrent import futures

import grpc
import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "Examples", "Sandbox"))
import backend_server  # noqa: E402
import certs  # noqa: E402
import test_service  # noqa: E402
import xds_control_plane as xcp  # noqa: E402

ACCOUNT = "xds-client@test-project.iam.gserviceaccount.com"
GOOGLE_NAMES = ("iamcredentials.googleapis.com", "oauth2.googleapis.com", "metadata.google.internal",
                "sts.googleapis.com", "www.googleapis.com")

# The client process: one call on xds:///NAME, the username it got on stdout.
CLIENT = """
import sys
sys.path.insert(0, sys.argv[1])
import grpc
import test_service
pb, pbg = test_service.load_protos(sys.argv[2])
with grpc.insecure_channel("xds:///" + sys.argv[3]) as channel:
    reply = pbg.TestServiceStub(channel).UnaryCall(pb.SimpleRequest(), timeout=float(sys.argv[4]), wait_for_ready=True)
    print(reply.username)
"""


def jwt_authorizer(public_key, port):
    """Accepts a self-signed JWT of ACCOUNT for this control plane's ADS service; else says why."""
    # C-core 1.85 names the authority alone; older releases appended the service.
    audiences = [f"https://127.0.0.1:{port}/", f"https://127.0.0.1:{port}/{xcp.ADS_SERVICE}"]

    def authorize(token):
        try:
            claims = jwt.decode(token, public_key, algorithms=["RS256"], audience=audiences, issuer=ACCOUNT,
                                options={"require": ["exp", "iat", "aud", "iss"]})
        except jwt.PyJWTError as error:
            return f"the JWT does not verify: {type(error).__name__}"
        return None if claims.get("sub") == ACCOUNT else "the JWT's subject is not the account"

    return authorize


class GoogleDefaultWithGrpcioTest(unittest.TestCase):
    def setUp(self):
        self.directory = tempfile.mkdtemp(prefix="xds-gd-")
        self.paths = certs.generate(self.directory)
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.public_key = key.public_key()
        self.key_path = os.path.join(self.directory, "service-account.json")
        document = {
            "type": "service_account", "project_id": "test-project", "private_key_id": "key-1",
            "private_key": key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                             serialization.NoEncryption()).decode("ascii"),
            "client_email": ACCOUNT, "client_id": "1234567890",
            # Never asked: C-core signs its own JWTs for a service account.
            "token_uri": "https://oauth2.googleapis.com/token",
        }
        with open(os.path.join(self.key_path), "w", encoding="utf-8") as handle:
            json.dump(document, handle)
        self.pb, self.pbg = test_service.load_protos(os.path.join(self.directory, "protos"))
        self.backend = grpc.server(futures.ThreadPoolExecutor(max_workers=4), options=[("grpc.so_reuseport", 0)])
        recorder = backend_server.Recorder(os.path.join(self.directory, "gd.ids"))
        self.addCleanup(recorder.close)
        self.pbg.add_TestServiceServicer_to_server(
            backend_server.make_servicer(self.pb, self.pbg, "gd-backend", recorder), self.backend)
        self.backend_port = self.backend.add_insecure_port("127.0.0.2:0")
        self.backend.start()
        self.addCleanup(lambda: self.backend.stop(grace=None).wait())

    def start_control_plane(self, tls):
        plane = xcp.ControlPlane()
        with open(self.paths["server_cert"], "rb") as chain, open(self.paths["server_key"], "rb") as key:
            port = plane.start(tls=(chain.read(), key.read()) if tls else None)
        self.addCleanup(plane.stop)
        plane._authorizer = jwt_authorizer(self.public_key, port)
        plane.set(xcp.ENDPOINTS, xcp.endpoints("gd-c", [(0, 1, "a", [("127.0.0.2", self.backend_port, "HEALTHY")])]))
        plane.set(xcp.CLUSTER, xcp.cluster("gd-c"))
        plane.set(xcp.ROUTE_CONFIGURATION, xcp.route_configuration("gd-routes", ["gd"], [xcp.route(cluster="gd-c")]))
        plane.set(xcp.LISTENER, xcp.listener("gd", "gd-routes"))
        return plane, port

    def run_client(self, port, timeout):
        bootstrap = {
            "xds_servers": [{"server_uri": f"127.0.0.1:{port}", "channel_creds": [{"type": "google_default"}],
                             "server_features": ["xds_v3"]}],
            "node": {"id": "grpcio-google-default"},
        }
        environment = {
            "PATH": os.environ.get("PATH", ""), "HOME": self.directory,
            "GRPC_XDS_BOOTSTRAP_CONFIG": json.dumps(bootstrap),
            "GOOGLE_APPLICATION_CREDENTIALS": self.key_path,
            "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH": self.paths["ca_cert"],
        }
        # C-core's service-account credentials also look up Google's regional access boundary
        # (iamcredentials.googleapis.com): in a mount namespace of its own, every Google name
        # is 127.0.0.1 and DNS asks 127.0.0.1, so nothing leaves the machine.
        hosts = os.path.join(self.directory, "hosts")
        with open(hosts, "w", encoding="utf-8") as handle:
            handle.write("127.0.0.1 localhost\n")
            for name in GOOGLE_NAMES:
                handle.write(f"127.0.0.1 {name}\n")
        resolver = os.path.join(self.directory, "resolv.conf")
        with open(resolver, "w", encoding="utf-8") as handle:
            handle.write("nameserver 127.0.0.1\n")
        isolate = 'mount --bind "$1" /etc/hosts && mount --bind "$2" /etc/resolv.conf && shift 2 && exec "$@"'
        return subprocess.run(
            ["unshare", "-m", "sh", "-c", isolate, "sh", hosts, resolver,
             sys.executable, "-c", CLIENT, os.path.join(HERE, "..", "..", "Examples", "Sandbox"),
             os.path.join(self.directory, "client-protos"), "gd", str(timeout)],
            env=environment, capture_output=True, text=True, timeout=timeout + 60)

    def test_google_default_over_tls_with_a_checked_token(self):
        plane, port = self.start_control_plane(tls=True)
        result = self.run_client(port, timeout=30)
        self.assertEqual(result.returncode, 0, result.stderr[-2000:])
        self.assertEqual(result.stdout.strip(), "gd-backend")
        judged = plane.authorizations()
        self.assertTrue(judged and all(entry[0] == "accepted" for entry in judged), judged)

    def test_google_default_to_a_plaintext_control_plane_sends_nothing(self):
        plane, port = self.start_control_plane(tls=False)
        started = time.monotonic()
        result = self.run_client(port, timeout=5)
        self.assertNotEqual(result.returncode, 0)
        self.assertLess(time.monotonic() - started, 60)
        self.assertEqual(plane.requests(), [])
        self.assertEqual(plane.authorizations(), [])


if __name__ == "__main__":
    unittest.main()
