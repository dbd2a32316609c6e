import AuthRPC
import Foundation
import GoogleAPICore
import GooglePubSub
import SwiftProtobuf
import TestSupport
import Testing

/// The generated clients of the vendored Pub/Sub and IAM protos against the sandbox's grpcio
/// servicers, behind its front end: every call is routed by its `google.api.http` path.
@Suite("Generated Pub/Sub and IAM clients against the sandbox")
struct PubSubClientTests {
    static func clients() async throws -> (
        Google_Pubsub_V1_PublisherClient, Google_Pubsub_V1_SubscriberClient, Google_Iam_V1_IAMPolicyClient
    ) {
        let channel = try await SandboxChannel.tls()
        return (
            Google_Pubsub_V1_PublisherClient(channel: channel), Google_Pubsub_V1_SubscriberClient(channel: channel),
            Google_Iam_V1_IAMPolicyClient(channel: channel)
        )
    }

    /// A project of the test's own.
    static func project() -> String { "projects/p" + UUID().uuidString.lowercased().prefix(12).filter { $0 != "-" } }

    @Test("Topics, publish, subscriptions, pull and acknowledge: each call routed by the resource it names")
    func publishAndPull() async throws {
        let (publisher, subscriber, _) = try await Self.clients()
        let project = Self.project()
        var topic = Google_Pubsub_V1_Topic()
        topic.name = "\(project)/topics/orders"
        topic.labels = ["team": "payments"]
        let created = try await publisher.createTopic(topic)
        #expect(created.message == topic)
        #expect(
            created.headers.firstString(forKey: "x-sandbox-request-params")
                == "name=\(project.replacingOccurrences(of: "/", with: "%2F"))%2Ftopics%2Forders"
        )

        var subscription = Google_Pubsub_V1_Subscription()
        subscription.name = "\(project)/subscriptions/workers"
        subscription.topic = topic.name
        #expect(try await subscriber.createSubscription(subscription).message.ackDeadlineSeconds == 10)

        var publish = Google_Pubsub_V1_PublishRequest()
        publish.topic = topic.name
        publish.messages = ["first", "second"].map { text in
            var message = Google_Pubsub_V1_PubsubMessage()
            message.data = Data(text.utf8)
            return message
        }
        let ids = try await publisher.publish(publish).message.messageIds
        #expect(ids.count == 2)

        var pull = Google_Pubsub_V1_PullRequest()
        pull.subscription = subscription.name
        pull.maxMessages = 10
        let received = try await subscriber.pull(pull).message.receivedMessages
        #expect(received.map { String(decoding: $0.message.data, as: UTF8.self) } == ["first", "second"])
        #expect(received.map(\.message.messageID) == ids)
        var acknowledge = Google_Pubsub_V1_AcknowledgeRequest()
        acknowledge.subscription = subscription.name
        acknowledge.ackIds = received.map(\.ackID)
        _ = try await subscriber.acknowledge(acknowledge)

        var update = Google_Pubsub_V1_UpdateTopicRequest()
        update.topic = topic
        update.topic.labels = ["team": "billing"]
        update.updateMask.paths = ["labels"]
        // Routed by a nested field: topic.name.
        #expect(try await publisher.updateTopic(update).message.labels == ["team": "billing"])

        var get = Google_Pubsub_V1_GetTopicRequest()
        get.topic = "\(project)/topics/missing"
        let error = await #expect(throws: RPCError.self) { try await publisher.getTopic(get) }
        #expect(error?.code == .notFound)
        #expect(error?.message == "Resource not found (resource=missing).")
    }

    @Test("ListTopics pages with listTopicsItems and listTopicsPages, one routed call per page")
    func pages() async throws {
        let (publisher, _, _) = try await Self.clients()
        let project = Self.project()
        for index in 0..<5 {
            var topic = Google_Pubsub_V1_Topic()
            topic.name = "\(project)/topics/topic-\(index)"
            _ = try await publisher.createTopic(topic)
        }
        var request = Google_Pubsub_V1_ListTopicsRequest()
        request.project = project
        request.pageSize = 2
        var names: [String] = []
        for try await topic in publisher.listTopicsItems(request) { names.append(topic.name) }
        #expect(names == (0..<5).map { "\(project)/topics/topic-\($0)" })
        var pageSizes: [Int] = []
        for try await page in publisher.listTopicsPages(request) { pageSizes.append(page.topics.count) }
        #expect(pageSizes == [2, 2, 1])

        var subscriptions = Google_Pubsub_V1_ListTopicSubscriptionsRequest()
        subscriptions.topic = "\(project)/topics/topic-0"
        var count = 0
        for try await _ in publisher.listTopicSubscriptionsItems(subscriptions) { count += 1 }
        #expect(count == 0)
    }

    @Test("IAMPolicy (the mixin every API serves) is routed by resource; etags guard concurrent changes")
    func iamPolicy() async throws {
        let (publisher, _, iam) = try await Self.clients()
        var topic = Google_Pubsub_V1_Topic()
        topic.name = "\(Self.project())/topics/guarded"
        _ = try await publisher.createTopic(topic)

        var get = Google_Iam_V1_GetIamPolicyRequest()
        get.resource = topic.name
        let policy = try await iam.getIamPolicy(get)
        #expect(
            policy.headers.firstString(forKey: "x-sandbox-request-params")?.hasPrefix("resource=projects%2F") == true
        )
        var set = Google_Iam_V1_SetIamPolicyRequest()
        set.resource = topic.name
        set.policy = policy.message
        var binding = Google_Iam_V1_Binding()
        binding.role = "roles/pubsub.publisher"
        binding.members = ["serviceAccount:writer@example.iam.gserviceaccount.com"]
        set.policy.bindings = [binding]
        let stored = try await iam.setIamPolicy(set).message
        #expect(stored.bindings == [binding] && stored.etag != policy.message.etag)
        let stale = await #expect(throws: RPCError.self) { try await iam.setIamPolicy(set) }
        #expect(stale?.code == .aborted)

        var test = Google_Iam_V1_TestIamPermissionsRequest()
        test.resource = topic.name
        test.permissions = ["pubsub.topics.publish", "storage.objects.get"]
        #expect(try await iam.testIamPermissions(test).message.permissions == ["pubsub.topics.publish"])
    }

    @Test("The same calls made by hand without x-goog-request-params are refused by the front end")
    func withoutTheHeader() async throws {
        let (publisher, _, iam) = try await Self.clients()
        var topic = Google_Pubsub_V1_Topic()
        topic.name = "\(Self.project())/topics/unrouted"
        let create = await #expect(throws: RPCError.self) {
            try await publisher.channel.unary(
                Google_Pubsub_V1_PublisherClient.Methods.createTopic,
                request: topic,
                responseType: Google_Pubsub_V1_Topic.self
            )
        }
        var get = Google_Iam_V1_GetIamPolicyRequest()
        get.resource = topic.name
        let policy = await #expect(throws: RPCError.self) {
            try await iam.channel.unary(
                Google_Iam_V1_IAMPolicyClient.Methods.getIamPolicy,
                request: get,
                responseType: Google_Iam_V1_Policy.self
            )
        }
        for error in [create, policy] {
            #expect(error?.code == .invalidArgument)
            #expect(error?.message == "An x-goog-request-params request metadata property must be provided")
        }
    }

    @Test("Clients carry the API's facts: host, scopes, and the service config text Google's figures were written into")
    func serviceFacts() throws {
        #expect(Google_Pubsub_V1_PublisherClient.defaultHost == "pubsub.googleapis.com")
        #expect(
            Google_Pubsub_V1_SubscriberClient.oauthScopes == [
                "https://www.googleapis.com/auth/cloud-platform", "https://www.googleapis.com/auth/pubsub",
            ]
        )
        let file = PackageRoot.url.appendingPathComponent("Protos/service_configs/pubsub_grpc_service_config.json")
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(Google_Pubsub_V1_PublisherClient.serviceConfigJSON == text)
        #expect(Google_Pubsub_V1_SubscriberClient.serviceConfigJSON == text)
        let longrunning = PackageRoot.url.appendingPathComponent(
            "Protos/service_configs/longrunning_grpc_service_config.json"
        )
        #expect(
            Google_Longrunning_OperationsClient.serviceConfigJSON
                == (try String(contentsOf: longrunning, encoding: .utf8))
        )
        let config = try JSONSerialization.jsonObject(with: Data(Google_Iam_V1_IAMPolicyClient.serviceConfigJSON.utf8))
        let methods = ((config as? [String: Any])?["methodConfig"] as? [[String: Any]])?.first
        #expect(methods?["timeout"] as? String == "60s")
    }

    @Test("The embedded service config loads into ServiceConfig: Publish gets Google's timeout and retry policy")
    func embeddedServiceConfigLoads() throws {
        let config = try Google_Pubsub_V1_PublisherClient.serviceConfig()
        let publish = try #require(
            config.methodConfig(for: MethodDescriptor(service: "google.pubsub.v1.Publisher", method: "Publish"))
        )
        #expect(publish.timeout == .seconds(60))
        let retry = try #require(publish.retryPolicy)
        #expect(retry.maxAttempts == 5)
        #expect(retry.initialBackoff == .milliseconds(100))
        #expect(retry.retryableStatusCodes.contains(.unavailable))
        #expect(try Google_Iam_V1_IAMPolicyClient.serviceConfig().methodConfigs.isEmpty == false)
        #expect(try Google_Longrunning_OperationsClient.serviceConfig().methodConfigs.isEmpty == false)
        _ = try Channel(target: "127.0.0.1:1", transportSecurity: .plaintext, serviceConfig: config)
    }
}
