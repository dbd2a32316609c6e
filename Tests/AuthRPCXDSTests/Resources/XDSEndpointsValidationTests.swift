import SwiftProtobuf
import Testing

@testable import AuthRPCXDS

typealias LocalityProto = Envoy_Config_Endpoint_V3_LocalityLbEndpoints

@Suite("XDSEndpoints validation (gRFC A27)")
struct XDSEndpointsValidationTests {
    static func locality(
        zone: String,
        priority: UInt32 = 0,
        weight: UInt32? = 1,
        _ endpoints: [(String, UInt32, Envoy_Config_Core_V3_HealthStatus)]
    ) -> LocalityProto {
        var locality = LocalityProto()
        locality.locality.region = "r"
        locality.locality.zone = zone
        locality.priority = priority
        if let weight { locality.loadBalancingWeight = .init(weight) }
        locality.lbEndpoints = endpoints.map { host, port, health in
            var endpoint = Envoy_Config_Endpoint_V3_LbEndpoint()
            endpoint.endpoint.address.socketAddress.address = host
            endpoint.endpoint.address.socketAddress.portValue = port
            endpoint.healthStatus = health
            return endpoint
        }
        return locality
    }

    static func assignment(_ localities: [LocalityProto]) -> Envoy_Config_Endpoint_V3_ClusterLoadAssignment {
        var assignment = Envoy_Config_Endpoint_V3_ClusterLoadAssignment()
        assignment.clusterName = "c"
        assignment.endpoints = localities
        return assignment
    }

    func nackField(_ localities: [LocalityProto]) -> String? {
        do {
            _ = try XDSEndpoints(validating: Self.assignment(localities))
            return nil
        } catch {
            return error.field
        }
    }

    @Test("priorities in order, locality weights, and only HEALTHY or UNKNOWN endpoints")
    func valid() throws {
        let endpoints = try XDSEndpoints(
            validating: Self.assignment([
                Self.locality(zone: "b", priority: 1, [("127.0.0.3", 50051, .healthy)]),
                Self.locality(
                    zone: "a",
                    weight: 3,
                    [
                        ("127.0.0.2", 50051, .healthy), ("::1", 50052, .unknown), ("127.0.0.4", 1, .unhealthy),
                        ("127.0.0.5", 1, .draining), ("127.0.0.6", 1, .degraded),
                    ]
                ),
                Self.locality(zone: "ignored-unweighted", weight: nil, [("127.0.0.7", 1, .healthy)]),
                Self.locality(zone: "ignored-zero", weight: 0, [("127.0.0.8", 1, .healthy)]),
            ])
        )
        #expect(endpoints.priorities.count == 2)
        #expect(endpoints.priorities[0].map(\.zone) == ["a"])
        #expect(endpoints.priorities[0][0].weight == 3)
        #expect(
            endpoints.priorities[0][0].endpoints == [
                .init(host: "127.0.0.2", port: 50051, weight: 1), .init(host: "::1", port: 50052, weight: 1),
            ]
        )
        #expect(endpoints.priorities[1].map(\.zone) == ["b"])
        #expect(try XDSEndpoints(validating: Self.assignment([])).priorities.isEmpty)
    }

    @Test("what NACKs names its field")
    func nacks() {
        #expect(nackField([Self.locality(zone: "a", priority: 1, [])]) == "endpoints")
        #expect(
            nackField([Self.locality(zone: "a", []), Self.locality(zone: "a", [])]) == "endpoints[1].locality"
        )
        #expect(
            nackField([Self.locality(zone: "a", [("backend.local", 1, .healthy)])])
                == "endpoints[0].lb_endpoints[0].endpoint.address.socket_address.address"
        )
        #expect(
            nackField([Self.locality(zone: "a", [("127.0.0.1", 70000, .healthy)])])
                == "endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value"
        )
        #expect(
            nackField([
                Self.locality(zone: "a", [("127.0.0.1", 1, .healthy)]),
                Self.locality(zone: "b", [("127.0.0.1", 1, .unknown)]),
            ]) == "endpoints[1].lb_endpoints[0]"
        )
        #expect(
            nackField([
                Self.locality(zone: "a", weight: UInt32.max, []), Self.locality(zone: "b", weight: 1, []),
            ]) == "endpoints[1]"
        )
        var zeroWeight = Self.locality(zone: "a", [("127.0.0.1", 1, .healthy)])
        zeroWeight.lbEndpoints[0].loadBalancingWeight = .init(0)
        #expect(nackField([zeroWeight]) == "endpoints[0].lb_endpoints[0].load_balancing_weight")
        var noAddress = Self.locality(zone: "a", [("127.0.0.1", 1, .healthy)])
        noAddress.lbEndpoints[0].endpoint.address.pipe = .init()
        #expect(nackField([noAddress]) == "endpoints[0].lb_endpoints[0].endpoint.address.socket_address")
    }
}
