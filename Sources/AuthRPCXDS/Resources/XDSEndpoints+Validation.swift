internal import SwiftProtobuf

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

extension XDSEndpoints {
    /// Validates a cluster load assignment as gRFC A27 says: a locality without a weight (or
    /// weight 0) is ignored, as is an endpoint whose health is neither `HEALTHY` nor `UNKNOWN`;
    /// priorities must run from 0 without a gap; the same locality twice in a priority, weights
    /// that sum past 32 bits, an endpoint weight of 0, an address that is not an IP literal with a
    /// port, or the same address twice NACKs.
    init(validating message: Envoy_Config_Endpoint_V3_ClusterLoadAssignment) throws(XDSResourceError) {
        guard message.endpoints.count <= XDSLimits.localities else {
            throw XDSResourceError("endpoints", "more than \(XDSLimits.localities) localities")
        }
        var byPriority: [UInt32: [Locality]] = [:]
        var seenAddresses: Set<String> = []
        for (index, entry) in message.endpoints.enumerated() {
            let field = "endpoints[\(index)]"
            guard entry.hasLoadBalancingWeight, entry.loadBalancingWeight.value > 0 else { continue }
            guard entry.lbEndpoints.count <= XDSLimits.endpointsPerLocality else {
                throw XDSResourceError("\(field).lb_endpoints", "more than \(XDSLimits.endpointsPerLocality) endpoints")
            }
            var endpoints: [Endpoint] = []
            for (endpointIndex, lbEndpoint) in entry.lbEndpoints.enumerated() {
                let endpointField = "\(field).lb_endpoints[\(endpointIndex)]"
                guard lbEndpoint.healthStatus == .healthy || lbEndpoint.healthStatus == .unknown else { continue }
                let endpoint = try Self.endpoint(lbEndpoint, endpointField)
                guard seenAddresses.insert("\(endpoint.host) \(endpoint.port)").inserted else {
                    throw XDSResourceError(endpointField, "the address \(endpoint.host):\(endpoint.port) appears twice")
                }
                endpoints.append(endpoint)
            }
            let locality = Locality(
                region: entry.locality.region,
                zone: entry.locality.zone,
                subZone: entry.locality.subZone,
                weight: entry.loadBalancingWeight.value,
                endpoints: endpoints
            )
            guard locality.name.utf8.count <= XDSLimits.stringBytes else {
                throw XDSResourceError("\(field).locality", "longer than \(XDSLimits.stringBytes) bytes")
            }
            var siblings = byPriority[entry.priority, default: []]
            guard !siblings.contains(where: { $0.name == locality.name }) else {
                throw XDSResourceError(
                    "\(field).locality",
                    "the locality '\(locality.name)' appears twice in priority \(entry.priority)"
                )
            }
            siblings.append(locality)
            let total = siblings.reduce(UInt64(0)) { $0 + UInt64($1.weight) }
            guard total <= UInt64(UInt32.max) else {
                throw XDSResourceError(
                    field,
                    "the locality weights of priority \(entry.priority) sum past \(UInt32.max)"
                )
            }
            byPriority[entry.priority] = siblings
        }
        var priorities: [[Locality]] = []
        for priority in 0..<UInt32(byPriority.count) {
            guard let localities = byPriority[priority] else {
                throw XDSResourceError(
                    "endpoints",
                    "priorities \(byPriority.keys.sorted()) have a gap: priority \(priority) is missing"
                )
            }
            priorities.append(localities)
        }
        self.init(priorities: priorities)
    }

    private static func endpoint(
        _ message: Envoy_Config_Endpoint_V3_LbEndpoint,
        _ field: String
    ) throws(XDSResourceError) -> Endpoint {
        guard case .endpoint(let endpoint) = message.hostIdentifier,
            case .socketAddress(let socket) = endpoint.address.address
        else {
            throw XDSResourceError("\(field).endpoint.address.socket_address", "is required")
        }
        guard case .portValue(let port) = socket.portSpecifier, port <= 65535 else {
            throw XDSResourceError("\(field).endpoint.address.socket_address.port_value", "must be 0...65535")
        }
        guard isIPLiteral(socket.address) else {
            throw XDSResourceError(
                "\(field).endpoint.address.socket_address.address",
                "must be an IPv4 or IPv6 address, not '\(socket.address.prefix(64))'"
            )
        }
        var weight: UInt32 = 1
        if message.hasLoadBalancingWeight {
            guard message.loadBalancingWeight.value > 0 else {
                throw XDSResourceError("\(field).load_balancing_weight", "must be greater than 0")
            }
            weight = message.loadBalancingWeight.value
        }
        return Endpoint(host: socket.address, port: Int(port), weight: weight)
    }

    private static func isIPLiteral(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count < 64 else { return false }
        var buffer = (UInt64(0), UInt64(0))
        return withUnsafeMutableBytes(of: &buffer) { bytes in
            inet_pton(AF_INET, text, bytes.baseAddress) == 1 || inet_pton(AF_INET6, text, bytes.baseAddress) == 1
        }
    }
}
