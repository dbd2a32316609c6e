"""Self-test of the sandbox's google.pubsub.v1, google.iam.v1.IAMPolicy and the Jobs test
service: starts sandbox.py and calls them with grpcio, routed as the front end asks.

    .venv/bin/python -m unittest discover -s Examples/Sandbox -p 'test_google_pubsub.py'
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

STATIC_TOKEN = "pubsub-self-test-token-" + os.urandom(6).hex()

protos = None
_generated_dir = None
sandbox = None


def setUpModule():
    global protos, _generated_dir, sandbox
    _generated_dir = tempfile.mkdtemp(prefix="sandbox-pubsub-protos-")
    protos = google_services.Protos(_generated_dir)
    sandbox = SandboxProcess("--static-token", STATIC_TOKEN)
    sandbox.wait_ready()


def tearDownModule():
    if sandbox is not None:
        sandbox.close()
    shutil.rmtree(_generated_dir, ignore_errors=True)


class PubSubTest(unittest.TestCase):
    def setUp(self):
        self.channel = grpc.insecure_channel(f"127.0.0.1:{sandbox.info['grpc_plaintext_port']}")
        self.publisher = protos.pubsub_grpc.PublisherStub(self.channel)
        self.subscriber = protos.pubsub_grpc.SubscriberStub(self.channel)
        self.iam = protos.iam_grpc.IAMPolicyStub(self.channel)
        self.operations = protos.operations_grpc.OperationsStub(self.channel)
        self.jobs = protos.examples_grpc.JobsStub(self.channel)
        self.project = "projects/p" + uuid.uuid4().hex[:12]
        self.pb = protos.pubsub

    def tearDown(self):
        self.channel.close()

    def call(self, method, request, route, token=STATIC_TOKEN):
        """Calls with the routing header `route` ([(key, value)]) and a token."""
        metadata = list(bearer(token)) if token else []
        metadata.append((google_front_end.REQUEST_PARAMS_KEY, google_front_end.encode(route)))
        return method(request, metadata=metadata, timeout=10)

    def fails(self, code, method, request, route, token=STATIC_TOKEN):
        with self.assertRaises(grpc.RpcError) as raised:
            self.call(method, request, route, token)
        self.assertEqual(raised.exception.code(), code, raised.exception.details())
        return raised.exception.details()

    def topic(self, name="orders"):
        topic = f"{self.project}/topics/{name}"
        self.call(self.publisher.CreateTopic, self.pb.Topic(name=topic, labels={"team": "a"}), [("name", topic)])
        return topic

    def subscription(self, topic, name="workers"):
        subscription = f"{self.project}/subscriptions/{name}"
        self.call(self.subscriber.CreateSubscription, self.pb.Subscription(name=subscription, topic=topic),
                  [("name", subscription)])
        return subscription

    def test_topics_are_created_read_updated_listed_in_pages_and_deleted(self):
        topic = self.topic()
        self.assertEqual(dict(self.call(self.publisher.GetTopic, self.pb.GetTopicRequest(topic=topic), [("topic", topic)]).labels),
                         {"team": "a"})
        self.assertIn("already exists", self.fails(grpc.StatusCode.ALREADY_EXISTS, self.publisher.CreateTopic,
                                                   self.pb.Topic(name=topic), [("name", topic)]))
        update = self.pb.UpdateTopicRequest(topic=self.pb.Topic(name=topic, labels={"team": "b"}))
        update.update_mask.paths.append("labels")
        self.assertEqual(dict(self.call(self.publisher.UpdateTopic, update, [("topic.name", topic)]).labels), {"team": "b"})
        for index in range(4):
            self.topic(f"more-{index}")
        names, token = [], ""
        while True:
            page = self.call(self.publisher.ListTopics,
                             self.pb.ListTopicsRequest(project=self.project, page_size=2, page_token=token),
                             [("project", self.project)])
            names += [topic.name for topic in page.topics]
            self.assertLessEqual(len(page.topics), 2)
            token = page.next_page_token
            if not token:
                break
        self.assertEqual(len(names), 5)
        self.call(self.publisher.DeleteTopic, self.pb.DeleteTopicRequest(topic=topic), [("topic", topic)])
        self.assertEqual(self.fails(grpc.StatusCode.NOT_FOUND, self.publisher.GetTopic,
                                    self.pb.GetTopicRequest(topic=topic), [("topic", topic)]),
                         "Resource not found (resource=orders).")
        self.fails(grpc.StatusCode.INVALID_ARGUMENT, self.publisher.CreateTopic, self.pb.Topic(name="topics/x"),
                   [("name", "topics/x")])

    def test_published_messages_are_pulled_until_acknowledged(self):
        topic = self.topic()
        subscription = self.subscription(topic)
        ids = self.call(self.publisher.Publish, self.pb.PublishRequest(topic=topic, messages=[
            self.pb.PubsubMessage(data=b"one"), self.pb.PubsubMessage(data=b"two", attributes={"k": "v"})]),
            [("topic", topic)]).message_ids
        self.assertEqual(len(ids), 2)
        pull = self.pb.PullRequest(subscription=subscription, max_messages=10)
        route = [("subscription", subscription)]
        received = self.call(self.subscriber.Pull, pull, route).received_messages
        self.assertEqual([m.message.data for m in received], [b"one", b"two"])
        self.assertEqual(list(ids), [m.message.message_id for m in received])
        # Leased: not delivered again until the deadline, or until it is set to zero.
        self.assertEqual(len(self.call(self.subscriber.Pull, pull, route).received_messages), 0)
        self.call(self.subscriber.ModifyAckDeadline, self.pb.ModifyAckDeadlineRequest(
            subscription=subscription, ack_ids=[received[1].ack_id], ack_deadline_seconds=0), route)
        again = self.call(self.subscriber.Pull, pull, route).received_messages
        self.assertEqual([m.message.data for m in again], [b"two"])
        self.call(self.subscriber.Acknowledge, self.pb.AcknowledgeRequest(
            subscription=subscription, ack_ids=[received[0].ack_id, again[0].ack_id]), route)
        self.call(self.subscriber.ModifyAckDeadline, self.pb.ModifyAckDeadlineRequest(
            subscription=subscription, ack_ids=[received[0].ack_id, again[0].ack_id], ack_deadline_seconds=0), route)
        self.assertEqual(len(self.call(self.subscriber.Pull, pull, route).received_messages), 0)
        self.fails(grpc.StatusCode.INVALID_ARGUMENT, self.publisher.Publish, self.pb.PublishRequest(topic=topic),
                   [("topic", topic)])
        self.fails(grpc.StatusCode.INVALID_ARGUMENT, self.subscriber.Pull,
                   self.pb.PullRequest(subscription=subscription), route)

    def test_subscriptions_are_listed_per_topic_and_per_project(self):
        topic = self.topic()
        first, second = self.subscription(topic, "a-sub"), self.subscription(topic, "b-sub")
        listed = self.call(self.publisher.ListTopicSubscriptions,
                           self.pb.ListTopicSubscriptionsRequest(topic=topic), [("topic", topic)])
        self.assertEqual(list(listed.subscriptions), [first, second])
        project = self.call(self.subscriber.ListSubscriptions,
                            self.pb.ListSubscriptionsRequest(project=self.project), [("project", self.project)])
        self.assertEqual([s.name for s in project.subscriptions], [first, second])
        self.assertEqual(project.subscriptions[0].ack_deadline_seconds, 10)
        self.call(self.subscriber.DeleteSubscription, self.pb.DeleteSubscriptionRequest(subscription=first),
                  [("subscription", first)])
        self.fails(grpc.StatusCode.NOT_FOUND, self.subscriber.GetSubscription,
                   self.pb.GetSubscriptionRequest(subscription=first), [("subscription", first)])
        self.fails(grpc.StatusCode.NOT_FOUND, self.subscriber.CreateSubscription,
                   self.pb.Subscription(name=f"{self.project}/subscriptions/orphan", topic=f"{self.project}/topics/none"),
                   [("name", f"{self.project}/subscriptions/orphan")])

    def test_iam_policies_have_etags_and_permissions_are_tested(self):
        topic = self.topic()
        iam, route = protos.iam, [("resource", topic)]
        policy = self.call(self.iam.GetIamPolicy, iam.GetIamPolicyRequest(resource=topic), route)
        binding = protos.policy.Binding(role="roles/pubsub.publisher", members=["user:someone@example.com"])
        changed = protos.policy.Policy(bindings=[binding], etag=policy.etag)
        stored = self.call(self.iam.SetIamPolicy, iam.SetIamPolicyRequest(resource=topic, policy=changed), route)
        self.assertNotEqual(stored.etag, policy.etag)
        self.assertEqual(self.call(self.iam.GetIamPolicy, iam.GetIamPolicyRequest(resource=topic), route).bindings[0].role,
                         "roles/pubsub.publisher")
        # The old etag no longer matches: someone else changed the policy in between.
        self.fails(grpc.StatusCode.ABORTED, self.iam.SetIamPolicy,
                   iam.SetIamPolicyRequest(resource=topic, policy=changed), route)
        held = self.call(self.iam.TestIamPermissions, iam.TestIamPermissionsRequest(
            resource=topic, permissions=["pubsub.topics.publish", "pubsub.subscriptions.consume", "storage.objects.get"]),
            route).permissions
        self.assertEqual(list(held), ["pubsub.topics.publish"])
        self.fails(grpc.StatusCode.NOT_FOUND, self.iam.GetIamPolicy,
                   iam.GetIamPolicyRequest(resource=f"{self.project}/topics/none"), [("resource", f"{self.project}/topics/none")])

    def test_a_job_is_a_long_running_operation_that_steps_each_time_it_is_looked_at(self):
        parent = f"{self.project}/locations/us-east1"
        examples, operations = protos.examples, protos.operations
        started = self.call(self.jobs.RunJob, examples.RunJobRequest(parent=parent, job_id="build", steps=3),
                            [("parent", parent)])
        self.assertEqual(started.name, f"{parent}/operations/build")
        self.assertFalse(started.done)
        get = operations.GetOperationRequest(name=started.name)
        progress = []
        while True:
            operation = self.call(self.operations.GetOperation, get, [("name", started.name)])
            step = examples.JobProgress()
            operation.metadata.Unpack(step)
            progress.append(step.steps_done)
            if operation.done:
                break
        self.assertEqual(progress, [1, 2, 3])
        result = examples.JobResult()
        operation.response.Unpack(result)
        self.assertEqual((result.job, result.steps_run), ("build", 3))

        failing = self.call(self.jobs.RunJob, examples.RunJobRequest(parent=parent, job_id="broken", steps=1, fail=True),
                            [("parent", parent)])
        failed = self.call(self.operations.GetOperation, operations.GetOperationRequest(name=failing.name),
                           [("name", failing.name)])
        self.assertTrue(failed.done)
        self.assertEqual(failed.error.code, grpc.StatusCode.FAILED_PRECONDITION.value[0])
        info = protos.details.ErrorInfo()
        failed.error.details[0].Unpack(info)
        self.assertEqual(info.reason, "JOB_FAILED")
        self.fails(grpc.StatusCode.ALREADY_EXISTS, self.jobs.RunJob,
                   examples.RunJobRequest(parent=parent, job_id="build", steps=1), [("parent", parent)])
        self.fails(grpc.StatusCode.INVALID_ARGUMENT, self.jobs.RunJob,
                   examples.RunJobRequest(parent=parent, job_id="x", steps=0), [("parent", parent)])

    def test_every_method_needs_a_token(self):
        topic = f"{self.project}/topics/t"
        self.fails(grpc.StatusCode.UNAUTHENTICATED, self.publisher.CreateTopic, self.pb.Topic(name=topic),
                   [("name", topic)], token=None)
        self.fails(grpc.StatusCode.UNAUTHENTICATED, self.iam.GetIamPolicy,
                   protos.iam.GetIamPolicyRequest(resource=topic), [("resource", topic)], token=None)


if __name__ == "__main__":
    unittest.main()
