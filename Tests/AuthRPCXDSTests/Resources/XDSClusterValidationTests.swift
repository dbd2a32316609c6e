import SwiftProtobuf
import Testing

@testable import AuthRPCXDS

@Suite("XDSCluster validation (gRFC A27)")
struct XDSClusterValidationTests {
    static func cluster(
        _ configure: (inout Envoy_Config_Cluster_V3_Cluster) -> Void = { _ in }
    )
        -> Envoy_Config_Cluster_V3_Cluster
    {
        var cluster = Envoy_Config_Cluster_V3_Cluster()
        cluster.name = "payments"
        cluster.type = .eds
        cluster.edsClusterConfig.edsConfig.ads = .init()
        cluster.lbPolicy = .roundRobin
        configure(&cluster)
        return cluster
    }

    func nackField(_ cluster: Envoy_Config_Cluster_V3_Cluster) -> String? {
        do {
            _ = try XDSCluster(validating: cluster)
            return nil
        } catch {
            return error.field
        }
    }

    @Test("an EDS cluster, round robin: its endpoints are named by service_name, else by the cluster")
    func valid() throws {
        #expect(try XDSCluster(validating: Self.cluster()) == XDSCluster(name: "payments", endpointsName: "payments"))
        let named = Self.cluster { $0.edsClusterConfig.serviceName = "payments-eds" }
        #expect(try XDSCluster(validating: named).endpointsName == "payments-eds")
        let selfLRS = Self.cluster {
            $0.edsClusterConfig.edsConfig.self_p = .init()
            $0.lrsServer.self_p = .init()
        }
        #expect(try XDSCluster(validating: selfLRS).name == "payments")
    }

    @Test("another type, policy or config source NACKs, naming the field")
    func nacks() {
        #expect(nackField(Self.cluster { $0.type = .logicalDns }) == "type")
        #expect(nackField(Self.cluster { $0.clusterType = .init() }) == "cluster_type")
        #expect(nackField(Self.cluster { $0.clusterDiscoveryType = nil }) == "type")
        #expect(nackField(Self.cluster { $0.lbPolicy = .ringHash }) == "lb_policy")
        #expect(nackField(Self.cluster { $0.lbPolicy = .leastRequest }) == "lb_policy")
        #expect(
            nackField(Self.cluster { $0.edsClusterConfig.edsConfig.path = "/x" }) == "eds_cluster_config.eds_config"
        )
        #expect(nackField(Self.cluster { $0.clearEdsClusterConfig() }) == "eds_cluster_config.eds_config")
        #expect(nackField(Self.cluster { $0.lrsServer.ads = .init() }) == "lrs_server")
        #expect(nackField(Self.cluster { $0.name = "" }) == "name")
    }
}
