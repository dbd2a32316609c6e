"""The test services of Protos/authrpc/testing/google_api_examples.proto on grpcio.

- authrpc.testing.googleapi.RoutingExamples: one method per example of AIP-4222
  (google/api/routing.proto) and a few of implicit routing. The front end has already checked the
  routing header; each method answers with every x-goog-request-params value the call carried and
  the value the sandbox computes from the request and the method's annotations
  (google_front_end.py), so a test can compare the client's header with an independent reading.
- authrpc.testing.googleapi.Jobs: RunJob starts a long-running operation in the sandbox's
  operation store (google_services.py). Each time a call looks at it (GetOperation,
  ListOperations, WaitOperation) the job does one step and its metadata (JobProgress) says so;
  after `steps` steps it is done with a JobResult, or, when the request asked it to fail, with
  FAILED_PRECONDITION and an ErrorInfo.
"""

import re

import grpc

import google_front_end
import test_service

_JOB_ID = re.compile(r"[a-z][a-z0-9-]{0,62}\Z")
MAX_STEPS = 100
ERROR_DOMAIN = "sandbox.swift-authrpc.local"


class Servicers:
    """The RoutingExamples and Jobs servicers for one port."""

    def __init__(self, protos, store, google_services, validate, port_label, operation_type, location_name):
        self.protos = protos
        self.store = store
        self.services = google_services   # google_services.GoogleServices of this port: name checks
        self.operation_type = operation_type  # google_services._Operation
        self.location_name = location_name    # the pattern of projects/P/locations/L
        self.validate = validate
        self.port_label = port_label
        self.routing = self._make_routing()
        self.jobs = self._make_jobs()

    def _begin(self, call):
        test_service.authenticate(call, self.validate, require_token=True)

    def _make_routing(self):
        service, pb = self, self.protos.examples
        descriptor = pb.DESCRIPTOR.services_by_name["RoutingExamples"]

        class RoutingExamples(self.protos.examples_grpc.RoutingExamplesServicer):
            port_label = self.port_label

        def echo(name, routing):
            def method(self, request, call):
                service._begin(call)
                received = [value for key, value in call.metadata if key == google_front_end.REQUEST_PARAMS_KEY]
                expected = google_front_end.encode(routing.expected(request))
                return pb.RoutingEcho(request_params=received, expected=expected)

            method.__name__ = name
            return test_service._rpc(method)

        for method in descriptor.methods:
            setattr(RoutingExamples, method.name,
                    echo(method.name, google_front_end.MethodRouting(method, self.protos.annotations)))
        return RoutingExamples()

    def _make_jobs(self):
        service, protos = self, self.protos
        pb, operations, details, status = protos.examples, protos.operations, protos.details, protos.status

        def step(job):
            """Called each time a call looks at the operation: one more step, the last finishes it."""
            def on_look(operation):
                progress = pb.JobProgress()
                operation.message.metadata.Unpack(progress)
                progress.steps_done += 1
                operation.message.metadata.Pack(progress)
                if progress.steps_done < progress.steps_total:
                    return
                operation.message.done = True
                if job.fail:
                    failure = status.Status(code=grpc.StatusCode.FAILED_PRECONDITION.value[0],
                                            message=f"job {job.job_id} failed at step {progress.steps_done}")
                    failure.details.add().Pack(details.ErrorInfo(
                        reason="JOB_FAILED", domain=ERROR_DOMAIN, metadata={"job": operation.message.name}))
                    operation.message.error.CopyFrom(failure)
                else:
                    operation.message.response.Pack(pb.JobResult(job=job.job_id, steps_run=progress.steps_done))

            return on_look

        class Jobs(protos.examples_grpc.JobsServicer):
            port_label = self.port_label

            @test_service._rpc
            def RunJob(self, request, call):
                service._begin(call)
                match = service.services._match(call, service.location_name, request.parent, "parent",
                                                "projects/P/locations/L")
                service.services._known_location(call, match["project"], match["location"])
                if not _JOB_ID.match(request.job_id):
                    call.fail(grpc.StatusCode.INVALID_ARGUMENT, "job_id must be 1-63 of [a-z0-9-], starting with a letter")
                if not 1 <= request.steps <= MAX_STEPS:
                    call.fail(grpc.StatusCode.INVALID_ARGUMENT, f"steps must be between 1 and {MAX_STEPS}")
                name = f"{request.parent}/operations/{request.job_id}"
                with service.store.condition:
                    service.store.seed(match["project"], match["location"])
                    if name in service.store.operations:
                        call.fail(grpc.StatusCode.ALREADY_EXISTS, f"operation {name!r} already exists")
                    operation = operations.Operation(name=name, done=False)
                    operation.metadata.Pack(pb.JobProgress(steps_done=0, steps_total=request.steps))
                    service.store.operations[name] = service.operation_type(operation, on_look=step(request))
                    answer = operations.Operation()
                    answer.CopyFrom(operation)
                return answer

        return Jobs()
