"""Self-test of the sandbox's google.longrunning.Operations and google.cloud.location.Locations:
starts sandbox.py as a subprocess and calls both services with grpcio.

    .venv/bin/python -m unittest discover -s Examples/Sandbox -p 'test_google_services.py'
"""

import os
import shutil
import sys
import tempfile
import unittest
import uuid

import grpc

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import google_front_end  # noqa: E402
import google_services  # noqa: E402
from test_sandbox import SandboxProcess, bearer  # noqa: E402

STATIC_TOKEN = "google-self-test-token-" + os.urandom(6).hex()

protos = None
_generated_dir = None
sandbox = None


def setUpModule():
    global protos, _generated_dir, sandbox
    _generated_dir = tempfile.mkdtemp(prefix="sandbox-google-protos-")
    protos = google_services.Protos(_generated_dir)
    sandbox = SandboxProcess("--static-token", STATIC_TOKEN)
    sandbox.wait_ready()


def tearDownModule():
    if sandbox is not None:
        sandbox.close()
    shutil.rmtree(_generated_dir, ignore_errors=True)


class GoogleServicesTest(unittest.TestCase):
    def setUp(self):
        self.channel = grpc.insecure_channel(f"127.0.0.1:{sandbox.info['grpc_plaintext_port']}")
        self.operations = protos.operations_grpc.OperationsStub(self.channel)
        self.locations = protos.locations_grpc.LocationsStub(self.channel)
        # A project of this test's own: its operations are seeded fresh.
        self.project = "p" + uuid.uuid4().hex[:12]
        self.parent = f"projects/{self.project}/locations/us-east1"

    def tearDown(self):
        self.channel.close()

    def call(self, method, request, token=STATIC_TOKEN):
        # Every method of both services routes by `name` (their google.api.http paths), and the
        # front end refuses a call whose x-goog-request-params does not say it.
        metadata = list(bearer(token)) if token else []
        if request.name:
            metadata.append((google_front_end.REQUEST_PARAMS_KEY, google_front_end.encode([("name", request.name)])))
        return method(request, metadata=metadata, timeout=10)

    def fails(self, code, method, request, token=STATIC_TOKEN):
        with self.assertRaises(grpc.RpcError) as raised:
            self.call(method, request, token)
        self.assertEqual(raised.exception.code(), code, raised.exception.details())
        return raised.exception

    def status_details(self, error):
        trailers = dict(error.trailing_metadata() or ())
        self.assertIn("grpc-status-details-bin", trailers)
        return protos.status.Status.FromString(trailers["grpc-status-details-bin"])

    # -- authentication -------------------------------------------------------------------------

    def test_every_method_needs_a_valid_token_on_both_ports(self):
        pb, lpb = protos.operations, protos.locations
        calls = [
            (self.operations.ListOperations, pb.ListOperationsRequest(name=self.parent)),
            (self.operations.GetOperation, pb.GetOperationRequest(name=f"{self.parent}/operations/build-1")),
            (self.operations.DeleteOperation, pb.DeleteOperationRequest(name=f"{self.parent}/operations/build-1")),
            (self.operations.CancelOperation, pb.CancelOperationRequest(name=f"{self.parent}/operations/build-4")),
            (self.operations.WaitOperation, pb.WaitOperationRequest(name=f"{self.parent}/operations/build-1")),
            (self.locations.ListLocations, lpb.ListLocationsRequest(name=f"projects/{self.project}")),
            (self.locations.GetLocation, lpb.GetLocationRequest(name=self.parent)),
        ]
        for method, request in calls:
            for token in (None, "not-a-token"):
                error = self.fails(grpc.StatusCode.UNAUTHENTICATED, method, request, token=token)
                challenges = [value for key, value in error.trailing_metadata() if key == "www-authenticate"]
                self.assertEqual(len(challenges), 1)
                self.assertTrue(challenges[0].startswith('Bearer realm="sandbox"'))
        # Nothing was deleted or cancelled by the refused calls.
        operation = self.call(self.operations.GetOperation, pb.GetOperationRequest(name=f"{self.parent}/operations/build-4"))
        self.assertFalse(operation.done)

    def test_an_issuer_token_is_accepted(self):
        import json
        import urllib.parse
        import urllib.request
        body = urllib.parse.urlencode({"grant_type": "client_credentials", "client_id": "sandbox-service",
                                       "client_secret": "sandbox-service-secret"}).encode()
        with urllib.request.urlopen(f"{sandbox.info['issuer']}/token", data=body, timeout=10) as answer:
            token = json.load(answer)["access_token"]
        location = self.call(self.locations.GetLocation, protos.locations.GetLocationRequest(name=self.parent), token=token)
        self.assertEqual(location.location_id, "us-east1")

    # -- Locations ------------------------------------------------------------------------------

    def test_list_locations_pages_and_filters(self):
        lpb = protos.locations
        first = self.call(self.locations.ListLocations, lpb.ListLocationsRequest(name=f"projects/{self.project}", page_size=2))
        self.assertEqual([location.location_id for location in first.locations], ["us-east1", "europe-west1"])
        self.assertTrue(first.next_page_token)
        second = self.call(self.locations.ListLocations, lpb.ListLocationsRequest(
            name=f"projects/{self.project}", page_size=2, page_token=first.next_page_token))
        self.assertEqual([location.location_id for location in second.locations], ["asia-northeast1"])
        self.assertEqual(second.next_page_token, "")
        europe = self.call(self.locations.ListLocations, lpb.ListLocationsRequest(
            name=f"projects/{self.project}", filter='labels.continent="europe"'))
        self.assertEqual([location.name for location in europe.locations], [f"projects/{self.project}/locations/europe-west1"])
        self.fails(grpc.StatusCode.INVALID_ARGUMENT, self.locations.ListLocations,
                   lpb.ListLocationsRequest(name=f"projects/{self.project}", filter="display_name:Bel*"))
        self.fails(grpc.StatusCode.INVALID_ARGUMENT, self.locations.ListLocations,
                   lpb.ListLocationsRequest(name=f"projects/{self.project}", page_token="forged"))
        self.fails(grpc.StatusCode.INVALID_ARGUMENT, self.locations.ListLocations, lpb.ListLocationsRequest(name="folders/1"))

    def test_get_location_and_an_unknown_one_with_details(self):
        lpb = protos.locations
        location = self.call(self.locations.GetLocation, lpb.GetLocationRequest(name=self.parent))
        self.assertEqual((location.display_name, dict(location.labels)), ("South Carolina", {"continent": "america"}))
        error = self.fails(grpc.StatusCode.NOT_FOUND, self.locations.GetLocation,
                           lpb.GetLocationRequest(name=f"projects/{self.project}/locations/mars-north1"))
        status = self.status_details(error)
        self.assertEqual(status.code, grpc.StatusCode.NOT_FOUND.value[0])
        resource = protos.details.ResourceInfo()
        self.assertTrue(status.details[0].Unpack(resource))
        self.assertEqual(resource.resource_type, "google.cloud.location.Location")

    # -- Operations -----------------------------------------------------------------------------

    def test_list_operations_seeds_four_and_filters_by_done(self):
        pb = protos.operations
        everything = self.call(self.operations.ListOperations, pb.ListOperationsRequest(name=self.parent))
        self.assertEqual([operation.name.rsplit("/", 1)[1] for operation in everything.operations],
                         ["build-1", "build-2", "build-3", "build-4"])
        pages, token = [], ""
        for _ in range(4):
            page = self.call(self.operations.ListOperations, pb.ListOperationsRequest(name=self.parent, page_size=1, page_token=token))
            pages += [operation.name for operation in page.operations]
            token = page.next_page_token
            if not token:
                break
        self.assertEqual(pages, [operation.name for operation in everything.operations])
        done = self.call(self.operations.ListOperations, pb.ListOperationsRequest(name=self.parent, filter="done=true"))
        self.assertTrue(all(operation.done for operation in done.operations))
        self.assertIn(f"{self.parent}/operations/build-1", [operation.name for operation in done.operations])
        self.fails(grpc.StatusCode.INVALID_ARGUMENT, self.operations.ListOperations,
                   pb.ListOperationsRequest(name=self.parent, filter="metadata.progress>5"))
        self.fails(grpc.StatusCode.NOT_FOUND, self.operations.ListOperations,
                   pb.ListOperationsRequest(name=f"projects/{self.project}/locations/mars-north1"))

    def test_get_delete_cancel_wait(self):
        pb = protos.operations
        built = self.call(self.operations.GetOperation, pb.GetOperationRequest(name=f"{self.parent}/operations/build-1"))
        location = protos.locations.Location()
        self.assertTrue(built.done and built.response.Unpack(location))
        self.assertEqual(location.name, self.parent)
        failed = self.call(self.operations.GetOperation, pb.GetOperationRequest(name=f"{self.parent}/operations/build-2"))
        self.assertEqual(failed.error.code, grpc.StatusCode.FAILED_PRECONDITION.value[0])

        waited = self.call(self.operations.WaitOperation, pb.WaitOperationRequest(name=f"{self.parent}/operations/build-3"))
        self.assertTrue(waited.done)

        self.call(self.operations.CancelOperation, pb.CancelOperationRequest(name=f"{self.parent}/operations/build-4"))
        cancelled = self.call(self.operations.GetOperation, pb.GetOperationRequest(name=f"{self.parent}/operations/build-4"))
        self.assertEqual((cancelled.done, cancelled.error.code), (True, grpc.StatusCode.CANCELLED.value[0]))

        self.call(self.operations.DeleteOperation, pb.DeleteOperationRequest(name=f"{self.parent}/operations/build-1"))
        error = self.fails(grpc.StatusCode.NOT_FOUND, self.operations.GetOperation,
                           pb.GetOperationRequest(name=f"{self.parent}/operations/build-1"))
        status = self.status_details(error)
        info = protos.details.ErrorInfo()
        self.assertTrue(status.details[1].Unpack(info))
        self.assertEqual((info.reason, info.metadata["resource_name"]), ("RESOURCE_NOT_FOUND", f"{self.parent}/operations/build-1"))
        self.fails(grpc.StatusCode.NOT_FOUND, self.operations.DeleteOperation,
                   pb.DeleteOperationRequest(name=f"{self.parent}/operations/build-1"))

    def test_wait_returns_a_running_operation_at_its_timeout(self):
        pb = protos.operations
        request = pb.WaitOperationRequest(name=f"{self.parent}/operations/build-4")
        request.timeout.FromMilliseconds(50)
        self.assertFalse(self.call(self.operations.WaitOperation, request).done)

    def test_malformed_names_are_invalid_arguments(self):
        pb = protos.operations
        for name in ("", "operations/1", f"{self.parent}/operations/UPPER", "projects/x/" + "a" * 2000):
            self.fails(grpc.StatusCode.INVALID_ARGUMENT, self.operations.GetOperation, pb.GetOperationRequest(name=name))


if __name__ == "__main__":
    unittest.main()
