internal import SwiftProtobuf

extension XDSNode {
    /// The client's user agent in the node it sends (`user_agent_name`).
    static let userAgentName = "swift-authrpc"

    /// The node as the ADS stream's first request carries it: the bootstrap's fields, the user
    /// agent, and the client features gRPC clients announce (no overprovisioning factor in EDS;
    /// the resource's own name accepted in state-of-the-world responses).
    var envoyNode: Envoy_Config_Core_V3_Node {
        var node = Envoy_Config_Core_V3_Node()
        node.id = id
        node.cluster = cluster
        if let locality {
            node.locality.region = locality.region
            node.locality.zone = locality.zone
            node.locality.subZone = locality.subZone
        }
        if !metadata.fields.isEmpty { node.metadata = metadata }
        node.userAgentName = Self.userAgentName
        node.clientFeatures = ["envoy.lb.does_not_support_overprovisioning"]
        return node
    }
}
