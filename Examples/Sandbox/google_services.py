"""Google APIs on grpcio, for the generated clients: google.longrunning.Operations,
google.cloud.location.Locations, google.pubsub.v1 (google_pubsub.py), google.iam.v1.IAMPolicy and
the test services of Protos/authrpc/testing (google_api_examples.py).

They are served on the sandbox's TLS and plaintext ports beside grpc.testing.TestService, with
servicers that grpcio-tools generates at every start from the vendored protos in Protos (the same
files the Swift clients are generated from). Every call first passes the front end's routing check
(google_front_end.py), then needs a bearer token, checked like TestService's (static tokens and
the issuer's access tokens). The behaviour is in memory and simple; see README.md ("Google
services").
"""

import importlib
import logging
import os
import re
import sys
import threading
import time

import grpc

import google_api_examples
import google_front_end
import google_pubsub
import paging
import test_service

PROTO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "Protos"))
PROTOS = [
    "google/api/http.proto",
    "google/api/annotations.proto",
    "google/api/launch_stage.proto",
    "google/api/client.proto",
    "google/api/field_behavior.proto",
    "google/api/resource.proto",
    "google/api/routing.proto",
    "google/rpc/status.proto",
    "google/rpc/error_details.proto",
    "google/type/expr.proto",
    "google/longrunning/operations_proto.proto",
    "google/cloud/location/locations.proto",
    "google/iam/v1/policy.proto",
    "google/iam/v1/options.proto",
    "google/iam/v1/iam_policy.proto",
    "google/pubsub/v1/schema.proto",
    "google/pubsub/v1/pubsub.proto",
    "authrpc/testing/google_api_examples.proto",
]

ERROR_DOMAIN = "sandbox.swift-authrpc.local"
MAX_WAIT_SECONDS = 30.0
# How long the seeded "build-3" operation runs before it finishes by itself.
QUICK_OPERATION_SECONDS = 0.5
MAX_NAME_BYTES = 1024
MAX_FILTER_BYTES = 256

# The locations every project has: id, display name, labels.
LOCATIONS = [
    ("us-east1", "South Carolina", {"continent": "america"}),
    ("europe-west1", "Belgium", {"continent": "europe"}),
    ("asia-northeast1", "Tokyo", {"continent": "asia"}),
]

_PROJECT = r"projects/(?P<project>[a-z][a-z0-9-]{0,62})"
_PROJECT_NAME = re.compile(_PROJECT + r"\Z")
_LOCATION_NAME = re.compile(_PROJECT + r"/locations/(?P<location>[a-z0-9-]{1,63})\Z")
_OPERATION_NAME = re.compile(_PROJECT + r"/locations/(?P<location>[a-z0-9-]{1,63})/operations/(?P<id>[a-z0-9-]{1,63})\Z")
_LABEL_FILTER = re.compile(r'\s*labels\.(?P<key>[a-z_][a-z0-9_-]*)\s*=\s*"?(?P<value>[a-z0-9_-]*)"?\s*\Z')
_DONE_FILTER = re.compile(r"\s*done\s*=\s*(?P<value>true|false)\s*\Z")

log = logging.getLogger("sandbox.google")


def _prefer_generated_packages(output_dir, top):
    """Puts the packages protoc wrote under `output_dir` first in the search path of the installed
    packages of the same name. `google` is a namespace package with protobuf alone, and the generated
    google.longrunning etc. would join it; but xds-protos (the xDS tests' descriptors) installs
    `google`, `google.longrunning`, `google.rpc`... as regular packages, which no other directory
    joins. Parents come first, so a package that only protoc wrote is found through its parent."""
    for directory, _, _ in os.walk(os.path.join(output_dir, top)):
        name = os.path.relpath(directory, output_dir).replace(os.sep, ".")
        try:
            package = importlib.import_module(name)
        except ImportError:
            continue
        search_path = getattr(package, "__path__", None)
        if search_path is not None and directory not in list(search_path):
            if isinstance(search_path, list):
                search_path.insert(0, directory)
            else:  # a namespace package's _NamespacePath
                search_path.append(directory)
    importlib.invalidate_caches()


class Protos:
    """The generated Python modules of the vendored protos."""

    def __init__(self, output_dir):
        from grpc_tools import protoc

        os.makedirs(output_dir, exist_ok=True)
        well_known = os.path.join(os.path.dirname(protoc.__file__), "_proto")
        missing = [path for path in PROTOS if not os.path.isfile(os.path.join(PROTO_ROOT, path))]
        if missing:
            raise RuntimeError(f"cannot find {', '.join(missing)} under {PROTO_ROOT}")
        status = protoc.main([
            "grpc_tools.protoc", f"-I{PROTO_ROOT}", f"-I{well_known}",
            f"--python_out={output_dir}", f"--grpc_python_out={output_dir}", *PROTOS,
        ])
        if status != 0:
            raise RuntimeError(f"protoc failed with status {status} on the googleapis protos in {PROTO_ROOT}")
        if output_dir not in sys.path:
            sys.path.insert(0, output_dir)
        importlib.invalidate_caches()
        _prefer_generated_packages(output_dir, "google")
        self.status = importlib.import_module("google.rpc.status_pb2")
        self.details = importlib.import_module("google.rpc.error_details_pb2")
        self.operations = importlib.import_module("google.longrunning.operations_proto_pb2")
        self.operations_grpc = importlib.import_module("google.longrunning.operations_proto_pb2_grpc")
        self.locations = importlib.import_module("google.cloud.location.locations_pb2")
        self.locations_grpc = importlib.import_module("google.cloud.location.locations_pb2_grpc")
        self.policy = importlib.import_module("google.iam.v1.policy_pb2")
        self.iam = importlib.import_module("google.iam.v1.iam_policy_pb2")
        self.iam_grpc = importlib.import_module("google.iam.v1.iam_policy_pb2_grpc")
        self.pubsub = importlib.import_module("google.pubsub.v1.pubsub_pb2")
        self.pubsub_grpc = importlib.import_module("google.pubsub.v1.pubsub_pb2_grpc")
        self.examples = importlib.import_module("authrpc.testing.google_api_examples_pb2")
        self.examples_grpc = importlib.import_module("authrpc.testing.google_api_examples_pb2_grpc")
        # The http and routing extensions, which the front end reads from method options.
        self.annotations = _Annotations(importlib.import_module("google.api.annotations_pb2").http,
                                        importlib.import_module("google.api.routing_pb2").routing)
        from google.protobuf import empty_pb2
        self.empty = empty_pb2


class _Annotations:
    def __init__(self, http, routing):
        self.http = http
        self.routing = routing


class _Operation:
    def __init__(self, message, finishes_at=None, on_look=None):
        self.message = message          # google.longrunning.Operation
        self.finishes_at = finishes_at  # monotonic time it finishes by itself, or None
        self.on_look = on_look          # called (with this operation) each time a call looks at it


class Store:
    """Operations by name, in memory, shared by both ports. Each location's operations are seeded
    the first time a call names that location, so a test that uses a project of its own starts
    from a known state."""

    def __init__(self, protos):
        self.protos = protos
        self.condition = threading.Condition()
        self.operations = {}        # name -> _Operation, in creation order
        self.seeded = set()         # location names already seeded

    def location(self, project, location_id):
        for identifier, display_name, labels in LOCATIONS:
            if identifier == location_id:
                message = self.protos.locations.Location(
                    name=f"projects/{project}/locations/{identifier}", location_id=identifier,
                    display_name=display_name)
                message.labels.update(labels)
                return message
        return None

    def seed(self, project, location_id):
        """Creates the location's four operations, once. Call with the condition held."""
        parent = f"projects/{project}/locations/{location_id}"
        if parent in self.seeded:
            return
        self.seeded.add(parent)
        pb, status_pb = self.protos.operations, self.protos.status

        built = pb.Operation(name=f"{parent}/operations/build-1", done=True)
        built.response.Pack(self.location(project, location_id))
        self.operations[built.name] = _Operation(built)

        failed = pb.Operation(name=f"{parent}/operations/build-2", done=True)
        failed.error.CopyFrom(status_pb.Status(code=grpc.StatusCode.FAILED_PRECONDITION.value[0],
                                               message="the build configuration is invalid"))
        self.operations[failed.name] = _Operation(failed)

        quick = pb.Operation(name=f"{parent}/operations/build-3", done=False)
        self.operations[quick.name] = _Operation(quick, finishes_at=time.monotonic() + QUICK_OPERATION_SECONDS)

        endless = pb.Operation(name=f"{parent}/operations/build-4", done=False)
        self.operations[endless.name] = _Operation(endless)

    def refresh(self, operation):
        """Finishes an operation whose time has come, or moves a job a step. Call with the
        condition held."""
        if not operation.message.done and operation.on_look is not None:
            operation.on_look(operation)
            if operation.message.done:
                self.condition.notify_all()
        if not operation.message.done and operation.finishes_at is not None and time.monotonic() >= operation.finishes_at:
            operation.message.done = True
            operation.message.response.Pack(self.protos.empty.Empty())
            self.condition.notify_all()


class GoogleServices:
    """The two servicers for one port, over the shared store."""

    def __init__(self, protos, store, validate, port_label):
        self.protos = protos
        self.store = store
        self.validate = validate
        self.port_label = port_label
        self.operations_servicer = self._make_operations_servicer()
        self.locations_servicer = self._make_locations_servicer()

    # -- what every method does -----------------------------------------------------------------

    def _begin(self, call):
        # A token on both ports: these stand for Google APIs, which never serve anonymous calls.
        test_service.authenticate(call, self.validate, require_token=True)

    def _not_found(self, call, resource_type, name, description):
        """NOT_FOUND with a google.rpc.Status in grpc-status-details-bin: ResourceInfo and ErrorInfo."""
        message = f"{resource_type} {name!r} not found"
        status = self.protos.status.Status(code=grpc.StatusCode.NOT_FOUND.value[0], message=message)
        resource = self.protos.details.ResourceInfo(resource_type=resource_type, resource_name=name,
                                                    owner=name.split("/locations/")[0], description=description)
        reason = self.protos.details.ErrorInfo(reason="RESOURCE_NOT_FOUND", domain=ERROR_DOMAIN,
                                               metadata={"resource_type": resource_type, "resource_name": name})
        status.details.add().Pack(resource)
        status.details.add().Pack(reason)
        call.fail(grpc.StatusCode.NOT_FOUND, message, [("grpc-status-details-bin", status.SerializeToString())])

    @staticmethod
    def _match(call, pattern, name, field, example):
        if len(name.encode()) > MAX_NAME_BYTES:
            call.fail(grpc.StatusCode.INVALID_ARGUMENT, f"{field} is longer than {MAX_NAME_BYTES} bytes")
        match = pattern.match(name)
        if match is None:
            call.fail(grpc.StatusCode.INVALID_ARGUMENT, f"{field} {name!r} is not of the form {example}")
        return match

    def _known_location(self, call, project, location_id):
        location = self.store.location(project, location_id)
        if location is None:
            self._not_found(call, "google.cloud.location.Location", f"projects/{project}/locations/{location_id}",
                            f"locations are {', '.join(identifier for identifier, _, _ in LOCATIONS)}")
        return location

    def _operation(self, call, name):
        """The operation called `name` (its location seeded first), or NOT_FOUND. Hold the condition."""
        match = self._match(call, _OPERATION_NAME, name, "name", "projects/P/locations/L/operations/ID")
        self._known_location(call, match["project"], match["location"])
        self.store.seed(match["project"], match["location"])
        operation = self.store.operations.get(name)
        if operation is None:
            self._not_found(call, "google.longrunning.Operation", name,
                            "the operation does not exist, or it was deleted")
        self.store.refresh(operation)
        return operation

    # -- google.longrunning.Operations ----------------------------------------------------------

    def _make_operations_servicer(self):
        service, pb, empty = self, self.protos.operations, self.protos.empty

        class Operations(self.protos.operations_grpc.OperationsServicer):
            port_label = self.port_label

            @test_service._rpc
            def ListOperations(self, request, call):
                service._begin(call)
                match = service._match(call, _LOCATION_NAME, request.name, "name", "projects/P/locations/L")
                service._known_location(call, match["project"], match["location"])
                if len(request.filter) > MAX_FILTER_BYTES:
                    call.fail(grpc.StatusCode.INVALID_ARGUMENT, f"filter is longer than {MAX_FILTER_BYTES} bytes")
                done_filter = _DONE_FILTER.match(request.filter) if request.filter else None
                if request.filter and done_filter is None:
                    call.fail(grpc.StatusCode.INVALID_ARGUMENT,
                              f"unsupported filter {request.filter!r} (supported: done=true, done=false)")
                prefix = request.name + "/operations/"
                with service.store.condition:
                    service.store.seed(match["project"], match["location"])
                    matching = []
                    for name, operation in service.store.operations.items():
                        if not name.startswith(prefix):
                            continue
                        service.store.refresh(operation)
                        if done_filter is None or operation.message.done == (done_filter["value"] == "true"):
                            matching.append(operation.message)
                    page, next_token = paging.page(call, matching, request.page_size, request.page_token)
                    response = pb.ListOperationsResponse(next_page_token=next_token)
                    response.operations.extend(page)
                return response

            @test_service._rpc
            def GetOperation(self, request, call):
                service._begin(call)
                answer = pb.Operation()
                with service.store.condition:
                    answer.CopyFrom(service._operation(call, request.name).message)
                return answer

            @test_service._rpc
            def DeleteOperation(self, request, call):
                service._begin(call)
                with service.store.condition:
                    service._operation(call, request.name)
                    del service.store.operations[request.name]
                return empty.Empty()

            @test_service._rpc
            def CancelOperation(self, request, call):
                service._begin(call)
                with service.store.condition:
                    operation = service._operation(call, request.name)
                    if not operation.message.done:  # cancelling a finished operation changes nothing
                        operation.message.done = True
                        operation.message.error.CopyFrom(service.protos.status.Status(
                            code=grpc.StatusCode.CANCELLED.value[0], message="cancelled by CancelOperation"))
                        operation.finishes_at = None
                        service.store.condition.notify_all()
                return empty.Empty()

            @test_service._rpc
            def WaitOperation(self, request, call):
                service._begin(call)
                if request.HasField("timeout") and request.timeout.ToTimedelta().total_seconds() < 0:
                    call.fail(grpc.StatusCode.INVALID_ARGUMENT, "timeout must not be negative")
                wait = MAX_WAIT_SECONDS
                if request.HasField("timeout"):
                    wait = min(wait, request.timeout.ToTimedelta().total_seconds())
                remaining = call.context.time_remaining()
                if remaining is not None:
                    wait = min(wait, max(remaining - 0.05, 0))
                deadline = time.monotonic() + wait
                with service.store.condition:
                    operation = service._operation(call, request.name)
                    while not operation.message.done and call.context.is_active():
                        now = time.monotonic()
                        if now >= deadline:
                            break
                        until = deadline if operation.finishes_at is None else min(deadline, operation.finishes_at)
                        service.store.condition.wait(max(until - now, 0.001))
                        operation = service._operation(call, request.name)  # deleted meanwhile: NOT_FOUND
                    answer = pb.Operation()
                    answer.CopyFrom(operation.message)
                return answer

        return Operations()

    # -- google.cloud.location.Locations --------------------------------------------------------

    def _make_locations_servicer(self):
        service, pb = self, self.protos.locations

        class Locations(self.protos.locations_grpc.LocationsServicer):
            port_label = self.port_label

            @test_service._rpc
            def ListLocations(self, request, call):
                service._begin(call)
                match = service._match(call, _PROJECT_NAME, request.name, "name", "projects/P")
                if len(request.filter) > MAX_FILTER_BYTES:
                    call.fail(grpc.StatusCode.INVALID_ARGUMENT, f"filter is longer than {MAX_FILTER_BYTES} bytes")
                label_filter = _LABEL_FILTER.match(request.filter) if request.filter else None
                if request.filter and label_filter is None:
                    call.fail(grpc.StatusCode.INVALID_ARGUMENT,
                              f"unsupported filter {request.filter!r} (supported: labels.KEY=VALUE)")
                locations = [service.store.location(match["project"], identifier) for identifier, _, _ in LOCATIONS]
                if label_filter is not None:
                    locations = [location for location in locations
                                 if location.labels.get(label_filter["key"]) == label_filter["value"]]
                page, next_token = paging.page(call, locations, request.page_size, request.page_token)
                response = pb.ListLocationsResponse(next_page_token=next_token)
                response.locations.extend(page)
                return response

            @test_service._rpc
            def GetLocation(self, request, call):
                service._begin(call)
                match = service._match(call, _LOCATION_NAME, request.name, "name", "projects/P/locations/L")
                return service._known_location(call, match["project"], match["location"])

        return Locations()


def registrar(validate, output_dir):
    """Returns `register(server, port_label)`, which adds every Google service to a grpcio server
    before it starts, each behind the front end's routing check. The protos are generated once;
    the operations, topics and subscriptions are shared by every port."""
    protos = Protos(output_dir)
    store = Store(protos)
    pubsub = google_pubsub.PubSub(protos)
    front_end = google_front_end.FrontEnd(protos.annotations)

    def service(module, name):
        return module.DESCRIPTOR.services_by_name[name]

    def register(server, port_label):
        services = GoogleServices(protos, store, validate, port_label)
        wrap = front_end.wrap
        protos.operations_grpc.add_OperationsServicer_to_server(
            wrap(services.operations_servicer, service(protos.operations, "Operations")), server)
        protos.locations_grpc.add_LocationsServicer_to_server(
            wrap(services.locations_servicer, service(protos.locations, "Locations")), server)
        servicers = google_pubsub.Servicers(pubsub, validate, port_label)
        protos.pubsub_grpc.add_PublisherServicer_to_server(
            wrap(servicers.publisher, service(protos.pubsub, "Publisher")), server)
        protos.pubsub_grpc.add_SubscriberServicer_to_server(
            wrap(servicers.subscriber, service(protos.pubsub, "Subscriber")), server)
        protos.iam_grpc.add_IAMPolicyServicer_to_server(
            wrap(servicers.iam_policy, service(protos.iam, "IAMPolicy")), server)
        examples = google_api_examples.Servicers(protos, store, services, validate, port_label, _Operation,
                                                 _LOCATION_NAME)
        protos.examples_grpc.add_RoutingExamplesServicer_to_server(
            wrap(examples.routing, service(protos.examples, "RoutingExamples")), server)
        protos.examples_grpc.add_JobsServicer_to_server(wrap(examples.jobs, service(protos.examples, "Jobs")), server)

    return register
