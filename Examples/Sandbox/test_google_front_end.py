"""Self-test of the sandbox's front end (google_front_end.py): the routing it computes from the
annotations, on AIP-4222's examples, and the check every Google service call passes first, over
real grpcio calls.

    .venv/bin/python -m unittest discover -s Examples/Sandbox -p 'test_google_front_end.py'
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

STATIC_TOKEN = "front-end-self-test-token-" + os.urandom(6).hex()

protos = None
_generated_dir = None
sandbox = None


def setUpModule():
    global protos, _generated_dir, sandbox
    _generated_dir = tempfile.mkdtemp(prefix="sandbox-front-end-protos-")
    protos = google_services.Protos(_generated_dir)
    sandbox = SandboxProcess("--static-token", STATIC_TOKEN)
    sandbox.wait_ready()


def tearDownModule():
    if sandbox is not None:
        sandbox.close()
    shutil.rmtree(_generated_dir, ignore_errors=True)


def routing(service, method):
    descriptor = service.DESCRIPTOR.services_by_name
    for name, candidate in descriptor.items():
        if method in candidate.methods_by_name:
            return google_front_end.MethodRouting(candidate.methods_by_name[method], protos.annotations)
    raise KeyError(method)


class RoutingComputationTest(unittest.TestCase):
    """The expected headers of google/api/routing.proto's examples, as routing.proto writes them."""

    def expected(self, method, **fields):
        request = protos.examples.TableRequest(**fields)
        return google_front_end.encode(routing(protos.examples, method).expected(request)).replace("%2F", "/")

    def test_routing_proto_examples(self):
        example = {"table_name": "projects/proj_foo/instances/instance_bar/table/table_baz",
                   "app_profile_id": "profiles/prof_qux"}
        documented = dict(example, table_name="projects/proj_foo/instances/instance_bar/tables/table_baz")
        cases = [
            ("Example1", example, "app_profile_id=profiles/prof_qux"),
            ("Example2", example, "routing_id=profiles/prof_qux"),
            ("Example3a", example, "table_name=projects/proj_foo/instances/instance_bar/table/table_baz"),
            ("Example3b", example, ""),
            ("Example3c", example, "table_name=projects/proj_foo/instances/instance_bar/table/table_baz"),
            ("Example4", example, "routing_id=projects/proj_foo"),
            ("Example5", example, "routing_id=projects/proj_foo/instances/instance_bar"),
            ("Example6a", example, "project_id=projects/proj_foo&instance_id=instances/instance_bar"),
            ("Example6b", example, "project_id=projects/proj_foo&instance_id=instances/instance_bar"),
            ("Example7", example, "project_id=projects/proj_foo&routing_id=profiles/prof_qux"),
            ("Example8", example, "routing_id=profiles/prof_qux"),
            ("Example9", documented, "table_location=instances/instance_bar&routing_id=prof_qux"),
            ("Example9", example, "routing_id=prof_qux"),
            ("Example6a", {"table_name": "projects/proj_foo/tables/t"}, ""),
            ("Example6b", {"table_name": "projects/proj_foo/tables/t"}, "project_id=projects/proj_foo"),
            ("ExplicitOverHttp", example, "app_profile_id=profiles/prof_qux"),
            ("NoRouting", example, ""),
        ]
        for method, fields, header in cases:
            with self.subTest(method=method, fields=fields):
                self.assertEqual(self.expected(method, **fields), header)

    def test_implicit_routing_from_http_paths(self):
        update = routing(protos.examples, "UpdateShelf")
        request = protos.examples.UpdateShelfRequest(shelf=protos.examples.Shelf(name="shelves/s1"))
        self.assertEqual(update.expected(request), [("shelf.name", "shelves/s1")])
        move = routing(protos.examples, "MoveBook")
        self.assertEqual(move.expected(protos.examples.MoveBookRequest(name="shelves/a/books/b", other_shelf_name="shelves/c")),
                         [("name", "shelves/a/books/b"), ("other_shelf_name", "shelves/c")])
        numbers = routing(protos.examples, "GetBookByNumber")
        self.assertEqual(numbers.expected(protos.examples.BookNumberRequest(shelf_id=-7, book_id=0)), [("shelf_id", "-7")])
        publish = routing(protos.pubsub, "Publish")
        self.assertEqual(publish.expected(protos.pubsub.PublishRequest(topic="projects/p/topics/t")),
                         [("topic", "projects/p/topics/t")])
        iam = routing(protos.iam, "SetIamPolicy")
        self.assertEqual(iam.expected(protos.iam.SetIamPolicyRequest(resource="projects/p/topics/t")),
                         [("resource", "projects/p/topics/t")])

    def test_encoding_and_parsing(self):
        pairs = [("name", "a b&c=d%e+f/g\u00e9~-._")]
        header = google_front_end.encode(pairs)
        self.assertEqual(header, "name=a%20b%26c%3Dd%25e%2Bf%2Fg%C3%A9~-._")
        self.assertEqual(google_front_end.parse([header]), dict(pairs))
        self.assertEqual(google_front_end.parse(["a=1&b=2", "b=3&"]), {"a": "1", "b": "3"})

    def test_check_outcomes(self):
        publish = routing(protos.pubsub, "Publish")
        request = protos.pubsub.PublishRequest(topic="projects/p/topics/t")
        header = (google_front_end.REQUEST_PARAMS_KEY, "topic=projects%2Fp%2Ftopics%2Ft")
        self.assertIsNone(google_front_end.check(publish, request, [header]))
        self.assertIsNone(google_front_end.check(publish, request, [(header[0], "topic=projects/p/topics/t&extra=1")]))
        self.assertEqual(google_front_end.check(publish, request, []), google_front_end.MISSING_MESSAGE)
        self.assertIn("its 'topic' is 'projects/p/topics/other'",
                      google_front_end.check(publish, request, [(header[0], "topic=projects%2Fp%2Ftopics%2Fother")]))
        self.assertIn("it has no 'topic'", google_front_end.check(publish, request, [(header[0], "name=x")]))
        # Nothing to route (the field is empty): nothing is asked for.
        self.assertIsNone(google_front_end.check(publish, protos.pubsub.PublishRequest(), []))


class FrontEndCallsTest(unittest.TestCase):
    """The check on real calls, over the plaintext port."""

    def setUp(self):
        self.channel = grpc.insecure_channel(f"127.0.0.1:{sandbox.info['grpc_plaintext_port']}")
        self.publisher = protos.pubsub_grpc.PublisherStub(self.channel)
        self.examples = protos.examples_grpc.RoutingExamplesStub(self.channel)
        self.topic = f"projects/p{uuid.uuid4().hex[:10]}/topics/t-front-end"

    def tearDown(self):
        self.channel.close()

    def call(self, method, request, header=None, api_client=None):
        metadata = list(bearer(STATIC_TOKEN))
        if header is not None:
            metadata.append((google_front_end.REQUEST_PARAMS_KEY, header))
        if api_client is not None:
            metadata.append((google_front_end.API_CLIENT_KEY, api_client))
        return method.with_call(request, metadata=metadata, timeout=10)

    def refused(self, method, request, header=None):
        with self.assertRaises(grpc.RpcError) as raised:
            self.call(method, request, header)
        self.assertEqual(raised.exception.code(), grpc.StatusCode.INVALID_ARGUMENT, raised.exception.details())
        return raised.exception.details()

    def test_a_call_without_the_header_is_refused_as_google_does(self):
        request = protos.pubsub.Topic(name=self.topic)
        self.assertEqual(self.refused(self.publisher.CreateTopic, request), google_front_end.MISSING_MESSAGE)

    def test_a_header_that_does_not_match_the_request_is_refused(self):
        request = protos.pubsub.Topic(name=self.topic)
        details = self.refused(self.publisher.CreateTopic, request, "name=projects%2Fp%2Ftopics%2Felsewhere")
        self.assertTrue(details.startswith(google_front_end.MISSING_MESSAGE), details)
        self.assertIn("'projects/p/topics/elsewhere'", details)

    def test_the_check_comes_before_the_method_even_an_unimplemented_one(self):
        request = protos.pubsub.ListTopicSnapshotsRequest(topic=self.topic)
        self.refused(self.publisher.ListTopicSnapshots, request)
        with self.assertRaises(grpc.RpcError) as raised:
            self.call(self.publisher.ListTopicSnapshots, request, google_front_end.encode([("topic", self.topic)]))
        self.assertEqual(raised.exception.code(), grpc.StatusCode.UNIMPLEMENTED)

    def test_a_routed_call_passes_and_what_it_carried_is_echoed(self):
        header = google_front_end.encode([("name", self.topic)])
        topic, call = self.call(self.publisher.CreateTopic, protos.pubsub.Topic(name=self.topic), header,
                                api_client="gl-python/3 grpc/1")
        self.assertEqual(topic.name, self.topic)
        initial = dict(call.initial_metadata())
        self.assertEqual(initial[google_front_end.REQUEST_PARAMS_ECHO_KEY], header)
        self.assertEqual(initial[google_front_end.API_CLIENT_ECHO_KEY], "gl-python/3 grpc/1")

    def test_routing_examples_echo_what_they_got_and_what_they_expected(self):
        request = protos.examples.TableRequest(table_name="projects/a/instances/b/tables/c", app_profile_id="profiles/x")
        header = "project_id=projects%2Fa&routing_id=profiles%2Fx"
        echo, _ = self.call(self.examples.Example7, request, header)
        self.assertEqual(list(echo.request_params), [header])
        self.assertEqual(echo.expected, header)
        # A method that routes nothing for this request asks for nothing.
        echo, _ = self.call(self.examples.Example3b, request)
        self.assertEqual((list(echo.request_params), echo.expected), ([], ""))


if __name__ == "__main__":
    unittest.main()
