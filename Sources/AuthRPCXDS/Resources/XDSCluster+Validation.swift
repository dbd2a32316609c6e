internal import SwiftProtobuf

extension XDSCluster {
    /// Validates a cluster as gRFC A27 says for this client: type `EDS` with its endpoints from
    /// ADS or the same server, `ROUND_ROBIN`, and no load reporting server but `self`. Another
    /// type (aggregate, logical DNS, a custom type) or policy NACKs.
    init(validating message: Envoy_Config_Cluster_V3_Cluster) throws(XDSResourceError) {
        guard !message.name.isEmpty, message.name.utf8.count <= XDSLimits.stringBytes else {
            throw XDSResourceError("name", "is empty or longer than \(XDSLimits.stringBytes) bytes")
        }
        switch message.clusterDiscoveryType {
        case .type(.eds): break
        case .type(let other):
            throw XDSResourceError("type", "only EDS clusters are supported, not \(other)")
        case .clusterType:
            throw XDSResourceError("cluster_type", "custom cluster types (aggregate, ...) are not supported")
        case nil:
            throw XDSResourceError("type", "only EDS clusters are supported, not STATIC")
        }
        guard message.hasEdsClusterConfig, message.edsClusterConfig.hasEdsConfig else {
            throw XDSResourceError("eds_cluster_config.eds_config", "is required")
        }
        switch message.edsClusterConfig.edsConfig.configSourceSpecifier {
        case .ads, .self_p: break
        default: throw XDSResourceError("eds_cluster_config.eds_config", "must be ads or self")
        }
        guard message.lbPolicy == .roundRobin else {
            throw XDSResourceError("lb_policy", "only ROUND_ROBIN is supported, not \(message.lbPolicy)")
        }
        if message.hasLrsServer {
            guard case .self_p = message.lrsServer.configSourceSpecifier else {
                throw XDSResourceError("lrs_server", "must be self")
            }
        }
        let service = message.edsClusterConfig.serviceName
        guard service.utf8.count <= XDSLimits.stringBytes else {
            throw XDSResourceError("eds_cluster_config.service_name", "longer than \(XDSLimits.stringBytes) bytes")
        }
        self.init(name: message.name, endpointsName: service.isEmpty ? message.name : service)
    }
}
