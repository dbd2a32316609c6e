import AuthRPC
import Foundation
import SwiftProtobuf
import TestSupport
import Testing

@testable import AuthRPCXDS

/// Responses encoded by Envoy's real messages (xds-protos, through Tests/Peers/xds_control_plane.py),
/// with fields the subset does not declare, decoded by the subset and taken by the ADS state.
@Suite("xDS responses encoded by xds-protos")
struct XDSUpstreamBytesTests {
    static func sampleResponses() async throws -> [XDSResourceType: Envoy_Service_Discovery_V3_DiscoveryResponse] {
        let script = PackageRoot.url.appendingPathComponent("Tests/Peers/xds_control_plane.py").path
        let result = try await ChildProcess.run(
            PackageRoot.python,
            [script, "--sample-responses"],
            timeout: .seconds(120)
        )
        try #require(result.status == 0, "\(result.stderr)")
        let encoded = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: String]
        )
        var responses: [XDSResourceType: Envoy_Service_Discovery_V3_DiscoveryResponse] = [:]
        for (typeURL, base64) in encoded {
            let type = try #require(XDSResourceType(rawValue: typeURL))
            let bytes = try #require(Data(base64Encoded: base64))
            responses[type] = try Envoy_Service_Discovery_V3_DiscoveryResponse(serializedBytes: bytes)
        }
        return responses
    }

    @Test("the four types decode, validate and are ACKed with what gRFC A27/A28 make of them")
    func upstreamBytes() async throws {
        let responses = try await Self.sampleResponses()
        #expect(responses.count == 4)
        var state = XDSADSState(node: XDSNode(id: "n").envoyNode, ignoresResourceDeletion: false)
        let now = ContinuousClock.now
        _ = state.subscribe(.listener, "svc", now: now)
        _ = state.subscribe(.routeConfiguration, "svc-routes", now: now)
        _ = state.subscribe(.cluster, "c1", now: now)
        _ = state.subscribe(.endpoints, "c1-eds", now: now)
        for type in XDSResourceType.allCases {
            let response = try #require(responses[type])
            let (request, changes) = try state.receive(response)
            #expect(request?.versionInfo == "v1", "\(type)")
            #expect(request?.responseNonce == response.nonce)
            #expect(request?.hasErrorDetail == false, "\(request?.errorDetail.message ?? "")")
            #expect(changes.count == 1, "\(type): \(changes)")
        }
        let entries = { (type: XDSResourceType, name: String) in state.types[type]?.entries[name]?.resource }
        #expect(entries(.listener, "svc") == .listener(XDSListener(name: "svc", routes: .rds("svc-routes"))))
        guard case .routeConfiguration(let routes) = entries(.routeConfiguration, "svc-routes") else {
            Issue.record("no routes")
            return
        }
        let host = try #require(routes.virtualHost(for: "svc"))
        #expect(routes.virtualHost(for: "a.svc.example.com")?.name == host.name)
        #expect(host.routes.count == 2)
        #expect(
            host.routes[0].match.headers == [
                XDSHeaderMatcher(name: "x-track", kind: .exact("Canary"), ignoresCase: true, inverted: false)
            ]
        )
        #expect(host.routes[0].action == .cluster("canary"))
        #expect(host.routes[1].name == "weighted")
        #expect(host.routes[1].match.path == .prefix("/grpc.testing.TestService/"))
        #expect(
            host.routes[1].action == .weightedClusters([.init(name: "c1", weight: 75), .init(name: "c2", weight: 25)])
        )
        #expect(host.routes[1].maxStreamDuration == .seconds(5))
        #expect(entries(.cluster, "c1") == .cluster(XDSCluster(name: "c1", endpointsName: "c1-eds")))
        guard case .endpoints(let endpoints) = entries(.endpoints, "c1-eds") else {
            Issue.record("no endpoints")
            return
        }
        #expect(endpoints.priorities.count == 2)
        #expect(endpoints.priorities[0].map(\.weight) == [3, 1])
        #expect(endpoints.priorities[0][0].endpoints == [.init(host: "127.0.0.2", port: 50051, weight: 1)])
        #expect(endpoints.priorities[0][1].endpoints == [.init(host: "::1", port: 50052, weight: 1)])
        #expect(endpoints.priorities[1][0].endpoints == [.init(host: "127.0.0.4", port: 50053, weight: 1)])
    }
}
