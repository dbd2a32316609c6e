"""google.pubsub.v1 (Publisher, Subscriber) and google.iam.v1.IAMPolicy on grpcio, in memory.

What the interop tests and the GoogleAPIs example use, with Google's rules where they matter to a
client: resource names (`projects/P/topics/T`, `projects/P/subscriptions/S`), NOT_FOUND and
ALREADY_EXISTS, paging, publish and pull with acknowledgement deadlines, IAM policies with etags.
Methods not listed here (snapshots, seek, schemas, streaming pull) answer UNIMPLEMENTED, after the
front end's routing check like every other.
"""

import hashlib
import re
import threading
import time

import grpc

import paging
import test_service

_PROJECT = r"projects/(?P<project>[a-z][a-z0-9-]{0,62})"
_PROJECT_NAME = re.compile(_PROJECT + r"\Z")
_TOPIC_NAME = re.compile(_PROJECT + r"/topics/(?P<id>[A-Za-z][A-Za-z0-9\-_.~+%]{2,254})\Z")
_SUBSCRIPTION_NAME = re.compile(_PROJECT + r"/subscriptions/(?P<id>[A-Za-z][A-Za-z0-9\-_.~+%]{2,254})\Z")
MAX_NAME_BYTES = 512
MAX_MESSAGES_PER_PUBLISH = 1000
MAX_MESSAGE_BYTES = 1 << 20
MAX_BACKLOG = 10_000
MAX_RESOURCES = 10_000
DEFAULT_ACK_DEADLINE = 10
# IAM permissions the sandbox user holds on topics and subscriptions (TestIamPermissions).
PERMISSIONS = {
    "topics": {"pubsub.topics.get", "pubsub.topics.publish", "pubsub.topics.update", "pubsub.topics.delete",
               "pubsub.topics.getIamPolicy", "pubsub.topics.setIamPolicy", "pubsub.topics.attachSubscription"},
    "subscriptions": {"pubsub.subscriptions.get", "pubsub.subscriptions.consume", "pubsub.subscriptions.update",
                      "pubsub.subscriptions.delete", "pubsub.subscriptions.getIamPolicy",
                      "pubsub.subscriptions.setIamPolicy"},
}


class _Pending:
    """A message waiting in a subscription until it is acknowledged."""

    def __init__(self, ack_id, message):
        self.ack_id = ack_id
        self.message = message      # google.pubsub.v1.PubsubMessage
        self.leased_until = 0.0     # monotonic time its current lease ends
        self.delivery_attempt = 0


class _Subscription:
    def __init__(self, message):
        self.message = message      # google.pubsub.v1.Subscription
        self.backlog = []           # [_Pending], in publish order


class PubSub:
    """Topics, subscriptions and IAM policies, shared by both ports."""

    def __init__(self, protos):
        self.protos = protos
        self.lock = threading.Lock()
        self.topics = {}            # name -> Topic
        self.subscriptions = {}     # name -> _Subscription
        self.policies = {}          # resource name -> Policy
        self.next_id = 1

    def new_id(self):
        """A fresh number for message and ack ids. Call with the lock held."""
        number = self.next_id
        self.next_id += 1
        return number


class Servicers:
    """The Publisher, Subscriber and IAMPolicy servicers for one port."""

    def __init__(self, pubsub, validate, port_label):
        self.pubsub = pubsub
        self.validate = validate
        self.port_label = port_label
        self.publisher = self._make_publisher()
        self.subscriber = self._make_subscriber()
        self.iam_policy = self._make_iam_policy()

    # -- what every method does -----------------------------------------------------------------

    def _begin(self, call):
        test_service.authenticate(call, self.validate, require_token=True)

    @staticmethod
    def _match(call, pattern, name, field, example):
        if len(name.encode()) > MAX_NAME_BYTES:
            call.fail(grpc.StatusCode.INVALID_ARGUMENT, f"{field} is longer than {MAX_NAME_BYTES} bytes")
        match = pattern.match(name)
        if match is None:
            call.fail(grpc.StatusCode.INVALID_ARGUMENT, f"Invalid {field} {name!r}: expected {example}")
        return match

    @staticmethod
    def _not_found(call, name):
        # Pub/Sub's own wording.
        call.fail(grpc.StatusCode.NOT_FOUND, f"Resource not found (resource={name.rsplit('/', 1)[-1]}).")

    def _topic(self, call, name):
        self._match(call, _TOPIC_NAME, name, "topic name", "projects/P/topics/T")
        topic = self.pubsub.topics.get(name)
        if topic is None:
            self._not_found(call, name)
        return topic

    def _subscription(self, call, name):
        self._match(call, _SUBSCRIPTION_NAME, name, "subscription name", "projects/P/subscriptions/S")
        subscription = self.pubsub.subscriptions.get(name)
        if subscription is None:
            self._not_found(call, name)
        return subscription

    def _room(self, call):
        if len(self.pubsub.topics) + len(self.pubsub.subscriptions) >= MAX_RESOURCES:
            call.fail(grpc.StatusCode.RESOURCE_EXHAUSTED, f"the sandbox holds at most {MAX_RESOURCES} resources")

    # -- google.pubsub.v1.Publisher -------------------------------------------------------------

    def _make_publisher(self):
        service, pb, state = self, self.pubsub.protos.pubsub, self.pubsub

        class Publisher(state.protos.pubsub_grpc.PublisherServicer):
            port_label = self.port_label

            @test_service._rpc
            def CreateTopic(self, request, call):
                service._begin(call)
                service._match(call, _TOPIC_NAME, request.name, "topic name", "projects/P/topics/T")
                with state.lock:
                    if request.name in state.topics:
                        call.fail(grpc.StatusCode.ALREADY_EXISTS, "Resource already exists in the project "
                                  f"(resource={request.name.rsplit('/', 1)[-1]}).")
                    service._room(call)
                    topic = pb.Topic()
                    topic.CopyFrom(request)
                    state.topics[request.name] = topic
                    answer = pb.Topic()
                    answer.CopyFrom(topic)
                return answer

            @test_service._rpc
            def GetTopic(self, request, call):
                service._begin(call)
                with state.lock:
                    answer = pb.Topic()
                    answer.CopyFrom(service._topic(call, request.topic))
                return answer

            @test_service._rpc
            def UpdateTopic(self, request, call):
                service._begin(call)
                paths = list(request.update_mask.paths)
                if not paths:
                    call.fail(grpc.StatusCode.INVALID_ARGUMENT, "update_mask must name at least one field")
                for path in paths:
                    if path not in ("labels", "message_retention_duration"):
                        call.fail(grpc.StatusCode.INVALID_ARGUMENT,
                                  f"update_mask names {path!r} (the sandbox updates labels and message_retention_duration)")
                with state.lock:
                    topic = service._topic(call, request.topic.name)
                    if "labels" in paths:
                        topic.labels.clear()
                        topic.labels.update(request.topic.labels)
                    if "message_retention_duration" in paths:
                        topic.message_retention_duration.CopyFrom(request.topic.message_retention_duration)
                    answer = pb.Topic()
                    answer.CopyFrom(topic)
                return answer

            @test_service._rpc
            def Publish(self, request, call):
                service._begin(call)
                if not request.messages:
                    call.fail(grpc.StatusCode.INVALID_ARGUMENT, "The request contains no messages.")
                if len(request.messages) > MAX_MESSAGES_PER_PUBLISH:
                    call.fail(grpc.StatusCode.INVALID_ARGUMENT,
                              f"A request may publish at most {MAX_MESSAGES_PER_PUBLISH} messages.")
                for message in request.messages:
                    if not message.data and not message.attributes:
                        call.fail(grpc.StatusCode.INVALID_ARGUMENT, "A message needs data or attributes.")
                    if message.ByteSize() > MAX_MESSAGE_BYTES:
                        call.fail(grpc.StatusCode.INVALID_ARGUMENT, f"A message is over {MAX_MESSAGE_BYTES} bytes.")
                response = pb.PublishResponse()
                with state.lock:
                    service._topic(call, request.topic)
                    subscriptions = [s for s in state.subscriptions.values() if s.message.topic == request.topic]
                    if any(len(s.backlog) + len(request.messages) > MAX_BACKLOG for s in subscriptions):
                        call.fail(grpc.StatusCode.RESOURCE_EXHAUSTED, f"a subscription holds at most {MAX_BACKLOG} messages")
                    for message in request.messages:
                        stored = pb.PubsubMessage()
                        stored.CopyFrom(message)
                        stored.message_id = str(state.new_id())
                        stored.publish_time.GetCurrentTime()
                        response.message_ids.append(stored.message_id)
                        for subscription in subscriptions:
                            ack_id = f"ack-{state.new_id()}-" + hashlib.sha256(subscription.message.name.encode()).hexdigest()[:8]
                            subscription.backlog.append(_Pending(ack_id, stored))
                return response

            @test_service._rpc
            def ListTopics(self, request, call):
                service._begin(call)
                service._match(call, _PROJECT_NAME, request.project, "project", "projects/P")
                prefix = request.project + "/topics/"
                with state.lock:
                    topics = [topic for name, topic in sorted(state.topics.items()) if name.startswith(prefix)]
                    page, next_token = paging.page(call, topics, request.page_size, request.page_token)
                    response = pb.ListTopicsResponse(next_page_token=next_token)
                    response.topics.extend(page)
                return response

            @test_service._rpc
            def ListTopicSubscriptions(self, request, call):
                service._begin(call)
                with state.lock:
                    service._topic(call, request.topic)
                    names = sorted(name for name, s in state.subscriptions.items() if s.message.topic == request.topic)
                    page, next_token = paging.page(call, names, request.page_size, request.page_token)
                return pb.ListTopicSubscriptionsResponse(subscriptions=page, next_page_token=next_token)

            @test_service._rpc
            def DeleteTopic(self, request, call):
                service._begin(call)
                with state.lock:
                    service._topic(call, request.topic)
                    del state.topics[request.topic]
                    state.policies.pop(request.topic, None)
                    # As in Pub/Sub, the subscriptions stay, detached.
                    for subscription in state.subscriptions.values():
                        if subscription.message.topic == request.topic:
                            subscription.message.topic = "_deleted-topic_"
                return state.protos.empty.Empty()

        return Publisher()

    # -- google.pubsub.v1.Subscriber ------------------------------------------------------------

    def _make_subscriber(self):
        service, pb, state = self, self.pubsub.protos.pubsub, self.pubsub

        class Subscriber(state.protos.pubsub_grpc.SubscriberServicer):
            port_label = self.port_label

            @test_service._rpc
            def CreateSubscription(self, request, call):
                service._begin(call)
                service._match(call, _SUBSCRIPTION_NAME, request.name, "subscription name",
                               "projects/P/subscriptions/S")
                deadline = request.ack_deadline_seconds or DEFAULT_ACK_DEADLINE
                if not 10 <= deadline <= 600:
                    call.fail(grpc.StatusCode.INVALID_ARGUMENT, "ack_deadline_seconds must be between 10 and 600")
                with state.lock:
                    service._topic(call, request.topic)
                    if request.name in state.subscriptions:
                        call.fail(grpc.StatusCode.ALREADY_EXISTS, "Resource already exists in the project "
                                  f"(resource={request.name.rsplit('/', 1)[-1]}).")
                    service._room(call)
                    subscription = pb.Subscription()
                    subscription.CopyFrom(request)
                    subscription.ack_deadline_seconds = deadline
                    state.subscriptions[request.name] = _Subscription(subscription)
                    answer = pb.Subscription()
                    answer.CopyFrom(subscription)
                return answer

            @test_service._rpc
            def GetSubscription(self, request, call):
                service._begin(call)
                with state.lock:
                    answer = pb.Subscription()
                    answer.CopyFrom(service._subscription(call, request.subscription).message)
                return answer

            @test_service._rpc
            def ListSubscriptions(self, request, call):
                service._begin(call)
                service._match(call, _PROJECT_NAME, request.project, "project", "projects/P")
                prefix = request.project + "/subscriptions/"
                with state.lock:
                    found = [s.message for name, s in sorted(state.subscriptions.items()) if name.startswith(prefix)]
                    page, next_token = paging.page(call, found, request.page_size, request.page_token)
                    response = pb.ListSubscriptionsResponse(next_page_token=next_token)
                    response.subscriptions.extend(page)
                return response

            @test_service._rpc
            def DeleteSubscription(self, request, call):
                service._begin(call)
                with state.lock:
                    service._subscription(call, request.subscription)
                    del state.subscriptions[request.subscription]
                    state.policies.pop(request.subscription, None)
                return state.protos.empty.Empty()

            @test_service._rpc
            def Pull(self, request, call):
                service._begin(call)
                if request.max_messages <= 0:
                    call.fail(grpc.StatusCode.INVALID_ARGUMENT, "max_messages must be positive")
                response = pb.PullResponse()
                now = time.monotonic()
                with state.lock:
                    subscription = service._subscription(call, request.subscription)
                    for pending in subscription.backlog:
                        if len(response.received_messages) >= request.max_messages:
                            break
                        if pending.leased_until > now:
                            continue
                        pending.leased_until = now + subscription.message.ack_deadline_seconds
                        pending.delivery_attempt += 1
                        received = response.received_messages.add(ack_id=pending.ack_id)
                        received.message.CopyFrom(pending.message)
                return response

            @test_service._rpc
            def Acknowledge(self, request, call):
                service._begin(call)
                if not request.ack_ids:
                    call.fail(grpc.StatusCode.INVALID_ARGUMENT, "ack_ids must not be empty")
                acknowledged = set(request.ack_ids)
                with state.lock:
                    subscription = service._subscription(call, request.subscription)
                    subscription.backlog = [p for p in subscription.backlog if p.ack_id not in acknowledged]
                return state.protos.empty.Empty()

            @test_service._rpc
            def ModifyAckDeadline(self, request, call):
                service._begin(call)
                if not 0 <= request.ack_deadline_seconds <= 600:
                    call.fail(grpc.StatusCode.INVALID_ARGUMENT, "ack_deadline_seconds must be between 0 and 600")
                changed = set(request.ack_ids)
                now = time.monotonic()
                with state.lock:
                    subscription = service._subscription(call, request.subscription)
                    for pending in subscription.backlog:
                        if pending.ack_id in changed:
                            pending.leased_until = now + request.ack_deadline_seconds if request.ack_deadline_seconds else 0.0
                return state.protos.empty.Empty()

        return Subscriber()

    # -- google.iam.v1.IAMPolicy ----------------------------------------------------------------

    def _make_iam_policy(self):
        service, state = self, self.pubsub

        class IAMPolicy(state.protos.iam_grpc.IAMPolicyServicer):
            port_label = self.port_label

            @staticmethod
            def _resource(call, name):
                """The kind of the resource (`topics`, `subscriptions`), which must exist."""
                if _TOPIC_NAME.match(name):
                    if name not in state.topics:
                        service._not_found(call, name)
                    return "topics"
                if _SUBSCRIPTION_NAME.match(name):
                    if name not in state.subscriptions:
                        service._not_found(call, name)
                    return "subscriptions"
                call.fail(grpc.StatusCode.INVALID_ARGUMENT,
                          f"resource {name[:MAX_NAME_BYTES]!r} is not a topic or subscription name")

            @test_service._rpc
            def GetIamPolicy(self, request, call):
                service._begin(call)
                answer = state.protos.policy.Policy()
                with state.lock:
                    self._resource(call, request.resource)
                    if request.resource in state.policies:
                        answer.CopyFrom(state.policies[request.resource])
                    else:
                        answer.version = 1
                        answer.etag = b"\x00"
                return answer

            @test_service._rpc
            def SetIamPolicy(self, request, call):
                service._begin(call)
                with state.lock:
                    self._resource(call, request.resource)
                    current = state.policies.get(request.resource)
                    current_etag = current.etag if current is not None else b"\x00"
                    if request.policy.etag and request.policy.etag != current_etag:
                        call.fail(grpc.StatusCode.ABORTED,
                                  "The policy was changed since it was read (etag mismatch); read it again and retry.")
                    policy = state.protos.policy.Policy()
                    policy.CopyFrom(request.policy)
                    policy.version = policy.version or 1
                    policy.etag = hashlib.sha256(policy.SerializeToString() + current_etag).digest()[:8]
                    state.policies[request.resource] = policy
                    answer = state.protos.policy.Policy()
                    answer.CopyFrom(policy)
                return answer

            @test_service._rpc
            def TestIamPermissions(self, request, call):
                service._begin(call)
                with state.lock:
                    kind = self._resource(call, request.resource)
                held = [permission for permission in request.permissions if permission in PERMISSIONS[kind]]
                return state.protos.iam.TestIamPermissionsResponse(permissions=held)

        return IAMPolicy()
