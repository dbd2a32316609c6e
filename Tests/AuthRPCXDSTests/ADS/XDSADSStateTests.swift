import AuthRPC
import Foundation
import SwiftProtobuf
import Testing

@testable import AuthRPCXDS

@Suite("XDSADSState: subscriptions, ACK and NACK, deletion and the does-not-exist timer")
struct XDSADSStateTests {
    static let start = ContinuousClock.now

    static func node() -> Envoy_Config_Core_V3_Node {
        var node = Envoy_Config_Core_V3_Node()
        node.id = "test-node"
        return node
    }

    static func any(_ message: some SwiftProtobuf.Message, typeURL: String) throws -> Google_Protobuf_Any {
        var any = Google_Protobuf_Any()
        any.typeURL = typeURL
        any.value = try message.serializedBytes()
        return any
    }

    static func cluster(
        _ name: String,
        policy: Envoy_Config_Cluster_V3_Cluster.LbPolicy = .roundRobin
    ) throws
        -> Google_Protobuf_Any
    {
        var cluster = XDSClusterValidationTests.cluster { $0.lbPolicy = policy }
        cluster.name = name
        return try any(cluster, typeURL: XDSResourceType.cluster.typeURL)
    }

    static func response(
        _ type: XDSResourceType,
        version: String,
        nonce: String,
        _ resources: [Google_Protobuf_Any]
    ) -> Envoy_Service_Discovery_V3_DiscoveryResponse {
        var response = Envoy_Service_Discovery_V3_DiscoveryResponse()
        response.typeURL = type.typeURL
        response.versionInfo = version
        response.nonce = nonce
        response.resources = resources
        return response
    }

    @Test("subscribing sends every name of the type, the node only on the stream's first request")
    func subscribe() throws {
        var state = XDSADSState(node: Self.node(), ignoresResourceDeletion: false)
        let firstRequest = state.subscribe(.cluster, "b", now: Self.start)
        let first = try #require(firstRequest)
        #expect(first.typeURL == "type.googleapis.com/envoy.config.cluster.v3.Cluster")
        #expect(first.resourceNames == ["b"])
        #expect(first.node.id == "test-node")
        #expect(first.versionInfo.isEmpty && first.responseNonce.isEmpty)
        let secondRequest = state.subscribe(.cluster, "a", now: Self.start)
        let second = try #require(secondRequest)
        #expect(second.resourceNames == ["a", "b"])
        #expect(!second.hasNode)
        #expect(state.subscribe(.cluster, "a", now: Self.start) == nil)
        let droppedRequest = state.unsubscribe(.cluster, "b")
        let dropped = try #require(droppedRequest)
        #expect(dropped.resourceNames == ["a"])
        #expect(state.unsubscribe(.cluster, "b") == nil)
    }

    @Test("a good response is ACKed with its version and nonce; the resource is cached")
    func ack() throws {
        var state = XDSADSState(node: Self.node(), ignoresResourceDeletion: false)
        _ = state.subscribe(.cluster, "a", now: Self.start)
        let (ack, changes) = try state.receive(
            Self.response(.cluster, version: "1", nonce: "n1", [try Self.cluster("a")])
        )
        #expect(ack?.versionInfo == "1")
        #expect(ack?.responseNonce == "n1")
        #expect(ack?.hasErrorDetail == false)
        #expect(changes == [.updated(.cluster, "a")])
        #expect(state.types[.cluster]?.entries["a"]?.resource == .cluster(XDSCluster(name: "a", endpointsName: "a")))
        // The same resource again: ACKed, nothing changed for the watchers.
        let (again, unchanged) = try state.receive(
            Self.response(.cluster, version: "2", nonce: "n2", [try Self.cluster("a")])
        )
        #expect(again?.versionInfo == "2")
        #expect(unchanged.isEmpty)
    }

    @Test("an invalid resource is NACKed with the last good version; the good one is kept, the valid rest taken")
    func nack() throws {
        var state = XDSADSState(node: Self.node(), ignoresResourceDeletion: false)
        _ = state.subscribe(.cluster, "a", now: Self.start)
        _ = state.subscribe(.cluster, "b", now: Self.start)
        _ = try state.receive(
            Self.response(.cluster, version: "1", nonce: "n1", [try Self.cluster("a"), try Self.cluster("b")])
        )
        let (nack, changes) = try state.receive(
            Self.response(
                .cluster,
                version: "2",
                nonce: "n2",
                [try Self.cluster("a", policy: .ringHash), try Self.cluster("b")]
            )
        )
        #expect(nack?.versionInfo == "1")
        #expect(nack?.responseNonce == "n2")
        #expect(nack?.errorDetail.code == 3)
        #expect(nack?.errorDetail.message.contains("a: lb_policy: only ROUND_ROBIN is supported") == true)
        #expect(
            changes == [
                .nacked(.cluster, "a", XDSResourceError("lb_policy", "only ROUND_ROBIN is supported, not ringHash"))
            ]
        )
        #expect(state.types[.cluster]?.entries["a"]?.resource == .cluster(XDSCluster(name: "a", endpointsName: "a")))
        #expect(state.types[.cluster]?.entries["a"]?.nackReason?.field == "lb_policy")
        // Garbage bytes and a resource of the wrong type are NACKed too.
        var garbage = try Self.cluster("c")
        garbage.value = Data([0xFF, 0xFF])
        var wrongType = try Self.cluster("d")
        wrongType.typeURL = XDSResourceType.listener.typeURL
        let (second, _) = try state.receive(Self.response(.cluster, version: "3", nonce: "n3", [garbage, wrongType]))
        #expect(second?.versionInfo == "1")
        #expect(second?.errorDetail.message.contains("resource 0: the resource does not decode") == true)
        #expect(second?.errorDetail.message.contains("resource 1: a resource of type") == true)
    }

    @Test("a cluster left out of a response is deleted, unless the server ignores deletions")
    func deletion() throws {
        for ignoring in [false, true] {
            var state = XDSADSState(node: Self.node(), ignoresResourceDeletion: ignoring)
            _ = state.subscribe(.cluster, "a", now: Self.start)
            _ = try state.receive(Self.response(.cluster, version: "1", nonce: "n1", [try Self.cluster("a")]))
            let (ack, changes) = try state.receive(Self.response(.cluster, version: "2", nonce: "n2", []))
            #expect(ack?.versionInfo == "2")
            #expect(changes == (ignoring ? [] : [.removed(.cluster, "a")]))
            #expect((state.types[.cluster]?.entries["a"]?.resource != nil) == ignoring)
        }
    }

    @Test(
        "a listener or cluster never heard of that a response leaves out waits for its timer, like endpoints: the response may answer an older request"
    )
    func doesNotExist() throws {
        var state = XDSADSState(node: Self.node(), ignoresResourceDeletion: false)
        _ = state.subscribe(.listener, "svc", now: Self.start)
        _ = state.subscribe(.cluster, "c", now: Self.start)
        _ = state.subscribe(.endpoints, "eds", now: Self.start)
        let (ack, changes) = try state.receive(Self.response(.listener, version: "1", nonce: "n1", []))
        #expect(ack?.versionInfo == "1")
        #expect(changes.isEmpty)
        #expect(try state.receive(Self.response(.cluster, version: "1", nonce: "n2", [])).changes.isEmpty)
        #expect(state.types[.listener]?.entries["svc"] == nil)
        #expect(state.nextDeadline == Self.start + .seconds(15))
        #expect(state.expire(now: Self.start + .seconds(14)).isEmpty)
        #expect(
            Set(state.expire(now: Self.start + .seconds(15)))
                == [.doesNotExist(.listener, "svc"), .doesNotExist(.cluster, "c"), .doesNotExist(.endpoints, "eds")]
        )
        #expect(state.nextDeadline == nil)
    }

    @Test(
        "a cluster asked for after a response was sent is taken from the next one that carries it, never reported missing"
    )
    func subscriptionRacingAResponse() throws {
        var state = XDSADSState(node: Self.node(), ignoresResourceDeletion: false)
        _ = state.subscribe(.cluster, "a", now: Self.start)
        _ = try state.receive(Self.response(.cluster, version: "1", nonce: "n1", [try Self.cluster("a")]))
        _ = state.subscribe(.cluster, "b", now: Self.start + .seconds(1))
        // The server answers the request that named only "a" before it sees the one naming "b".
        let (_, stale) = try state.receive(Self.response(.cluster, version: "2", nonce: "n2", [try Self.cluster("a")]))
        #expect(stale.isEmpty)
        let (_, fresh) = try state.receive(
            Self.response(.cluster, version: "3", nonce: "n3", [try Self.cluster("a"), try Self.cluster("b")])
        )
        #expect(fresh == [.updated(.cluster, "b")])
        #expect(state.nextDeadline == nil)
    }

    @Test("a new stream re-sends every subscription with the versions ACKed, no nonce, the node first")
    func restart() throws {
        var state = XDSADSState(node: Self.node(), ignoresResourceDeletion: false)
        _ = state.subscribe(.cluster, "a", now: Self.start)
        _ = state.subscribe(.endpoints, "e", now: Self.start)
        _ = try state.receive(Self.response(.cluster, version: "7", nonce: "n1", [try Self.cluster("a")]))
        let requests = state.streamStarted(now: Self.start + .seconds(100))
        #expect(requests.map(\.typeURL) == [XDSResourceType.cluster.typeURL, XDSResourceType.endpoints.typeURL])
        #expect(requests[0].versionInfo == "7")
        #expect(requests[0].responseNonce.isEmpty)
        #expect(requests[0].hasNode && !requests[1].hasNode)
        // The endpoints' timer starts again with the new stream.
        #expect(state.nextDeadline == Self.start + .seconds(115))
    }

    @Test("bounds: a nonce or version over 1 KiB or too many resources ends the stream; unknown types are ignored")
    func bounds() throws {
        var state = XDSADSState(node: Self.node(), ignoresResourceDeletion: false)
        _ = state.subscribe(.cluster, "a", now: Self.start)
        let long = String(repeating: "v", count: XDSLimits.versionOrNonceBytes + 1)
        #expect(throws: XDSResourceError.self) {
            _ = try state.receive(Self.response(.cluster, version: long, nonce: "n", []))
        }
        #expect(throws: XDSResourceError.self) {
            _ = try state.receive(Self.response(.cluster, version: "1", nonce: long, []))
        }
        let many = Array(repeating: Google_Protobuf_Any(), count: XDSLimits.resourcesPerResponse + 1)
        #expect(throws: XDSResourceError.self) {
            _ = try state.receive(Self.response(.cluster, version: "1", nonce: "n", many))
        }
        var unknown = Self.response(.cluster, version: "1", nonce: "n", [])
        unknown.typeURL = "type.googleapis.com/envoy.config.listener.v3.Other"
        let (answer, changes) = try state.receive(unknown)
        #expect(answer == nil && changes.isEmpty)
        // Nothing of the refused responses was taken.
        #expect(state.types[.cluster]?.ackedVersion == "")
    }
}
