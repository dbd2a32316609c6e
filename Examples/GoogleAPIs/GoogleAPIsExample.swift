import AuthRPC
import Foundation
import GoogleAPICore
import GoogleAuth
import GooglePubSub
import OAuth2

/// Calls Google Cloud Pub/Sub and its IAM methods with Application Default Credentials, through
/// the clients swift-authrpc generates from the protos Google publishes: every call carries the
/// routing header Google's front end asks for, and `x-goog-api-client`.
///
///     GoogleAPIsExample PROJECT_ID [--endpoint HOST[:PORT]] [--ca-file CA.pem]
///
/// It creates a topic and a subscription of its own, publishes three messages, pulls and
/// acknowledges them, lists the project's topics page by page, reads the topic's IAM policy and
/// the permissions the caller holds on it, and deletes what it created. The endpoint is the API's
/// own (`pubsub.googleapis.com`, port 443) unless `--endpoint` says otherwise; `--ca-file` trusts
/// another certificate authority than the system's (a test server's).
@main
struct GoogleAPIsExample {
    struct Failure: Error, CustomStringConvertible {
        var description: String
        var status: Int32
    }

    static func main() async {
        do {
            try await run(Array(CommandLine.arguments.dropFirst()))
        } catch let failure as Failure {
            FileHandle.standardError.write(Data("GoogleAPIsExample: \(printable(failure.description))\n".utf8))
            exit(failure.status)
        } catch {
            FileHandle.standardError.write(Data("GoogleAPIsExample: \(printable("\(error)"))\n".utf8))
            exit(1)
        }
    }

    /// A server's words made safe for a terminal: control characters become `?`.
    static func printable(_ text: String) -> String {
        String(
            String.UnicodeScalarView(text.unicodeScalars.map { $0.properties.generalCategory == .control ? "?" : $0 })
        )
    }

    static func run(_ arguments: [String]) async throws {
        var project: String?
        var endpoint = Google_Pubsub_V1_PublisherClient.defaultHost
        var caFile: String?
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--endpoint", "--ca-file":
                guard let value = rest.popFirst() else {
                    throw Failure(description: "\(argument) needs a value", status: 2)
                }
                if argument == "--endpoint" { endpoint = value } else { caFile = value }
            case _ where argument.hasPrefix("-"):
                throw Failure(description: "unknown option \(argument)", status: 2)
            default:
                guard project == nil else { throw Failure(description: "one project only", status: 2) }
                project = argument
            }
        }
        guard let project, !project.isEmpty else {
            throw Failure(
                description: "usage: GoogleAPIsExample PROJECT_ID [--endpoint HOST[:PORT]] [--ca-file CA.pem]",
                status: 2
            )
        }

        // Application Default Credentials, with the scopes the API asks for.
        let credentials: GoogleCredentials
        do {
            credentials = try GoogleCredentials.applicationDefault(scopes: Google_Pubsub_V1_PublisherClient.oauthScopes)
        } catch {
            throw Failure(description: "no usable Application Default Credentials: \(error)", status: 2)
        }
        let trust: TLSConfiguration.TrustRoots =
            try caFile.map { .certificates(pem: try String(contentsOfFile: $0, encoding: .utf8)) } ?? .system
        let channel = try Channel(
            target: endpoint,
            transportSecurity: .tls(TLSConfiguration(trustRoots: trust)),
            defaultCallOptions: CallOptions(timeout: .seconds(30), credentials: .provider(credentials))
        )
        // Awaited before the program exits: the connection ends cleanly, not cut off.
        do {
            try await exercise(channel, project: project)
        } catch {
            await channel.shutdown()
            throw error
        }
        await channel.shutdown()
    }

    /// Creates, publishes, pulls, lists, reads IAM and deletes over `channel`.
    static func exercise(_ channel: Channel, project: String) async throws {
        let publisher = Google_Pubsub_V1_PublisherClient(channel: channel)
        let subscriber = Google_Pubsub_V1_SubscriberClient(channel: channel)
        let iam = Google_Iam_V1_IAMPolicyClient(channel: channel)

        let suffix = UUID().uuidString.lowercased().prefix(8)
        var topic = Google_Pubsub_V1_Topic()
        topic.name = "projects/\(project)/topics/authrpc-example-\(suffix)"
        topic.labels = ["created-by": "swift-authrpc-example"]
        _ = try await publisher.createTopic(topic)
        print("created topic \(topic.name)")

        var subscription = Google_Pubsub_V1_Subscription()
        subscription.name = "projects/\(project)/subscriptions/authrpc-example-\(suffix)"
        subscription.topic = topic.name
        _ = try await subscriber.createSubscription(subscription)
        print("created subscription \(subscription.name)")

        var publish = Google_Pubsub_V1_PublishRequest()
        publish.topic = topic.name
        publish.messages = ["one", "two", "three"].map { text in
            var message = Google_Pubsub_V1_PubsubMessage()
            message.data = Data(text.utf8)
            return message
        }
        let ids = try await publisher.publish(publish).message.messageIds
        print("published \(ids.count) messages")

        var pulled: [String] = []
        var pull = Google_Pubsub_V1_PullRequest()
        pull.subscription = subscription.name
        pull.maxMessages = 10
        for _ in 0..<10 where pulled.count < ids.count {
            let received = try await subscriber.pull(pull).message.receivedMessages
            guard !received.isEmpty else { continue }
            var acknowledge = Google_Pubsub_V1_AcknowledgeRequest()
            acknowledge.subscription = subscription.name
            acknowledge.ackIds = received.map(\.ackID)
            _ = try await subscriber.acknowledge(acknowledge)
            pulled += received.map { String(decoding: $0.message.data, as: UTF8.self) }
        }
        print("pulled and acknowledged: \(pulled.joined(separator: ", "))")

        var list = Google_Pubsub_V1_ListTopicsRequest()
        list.project = "projects/\(project)"
        list.pageSize = 50
        var count = 0
        var found = false
        for try await listed in publisher.listTopicsItems(list) {
            count += 1
            found = found || listed.name == topic.name
        }
        print("listed \(count) topics in the project, ours \(found ? "among them" : "missing")")

        var getPolicy = Google_Iam_V1_GetIamPolicyRequest()
        getPolicy.resource = topic.name
        let policy = try await iam.getIamPolicy(getPolicy).message
        var test = Google_Iam_V1_TestIamPermissionsRequest()
        test.resource = topic.name
        test.permissions = ["pubsub.topics.publish", "pubsub.topics.delete"]
        let held = try await iam.testIamPermissions(test).message.permissions
        print(
            "IAM policy: version \(policy.version), \(policy.bindings.count) bindings; held: \(held.joined(separator: ", "))"
        )

        var deleteSubscription = Google_Pubsub_V1_DeleteSubscriptionRequest()
        deleteSubscription.subscription = subscription.name
        _ = try await subscriber.deleteSubscription(deleteSubscription)
        var deleteTopic = Google_Pubsub_V1_DeleteTopicRequest()
        deleteTopic.topic = topic.name
        _ = try await publisher.deleteTopic(deleteTopic)
        print("deleted the subscription and the topic")
    }
}
