internal import SwiftProtobuf

/// Turns one `google.protobuf.Any` of a response into a named, validated resource.
enum XDSResourceDecoder {
    /// What one resource of a response came to.
    enum Outcome: Sendable, Hashable {
        case valid(name: String, XDSResource)
        /// A resource whose name is known but that does not validate: NACKed, and its last good
        /// version kept.
        case invalid(name: String, XDSResourceError)
        /// A resource that does not decode far enough to have a name.
        case unnamed(XDSResourceError)
    }

    static func decode(_ any: Google_Protobuf_Any, as type: XDSResourceType) -> Outcome {
        guard any.typeURL == type.typeURL else {
            return .unnamed(
                XDSResourceError("", "a resource of type '\(any.typeURL.prefix(200))' in a \(type) response")
            )
        }
        do {
            switch type {
            case .listener:
                let message = try Envoy_Config_Listener_V3_Listener(serializedBytes: any.value)
                return validate(message.name) { () throws(XDSResourceError) in
                    .listener(try XDSListener(validating: message))
                }
            case .routeConfiguration:
                let message = try Envoy_Config_Route_V3_RouteConfiguration(serializedBytes: any.value)
                return validate(message.name) { () throws(XDSResourceError) in
                    .routeConfiguration(try XDSRouteConfiguration(validating: message))
                }
            case .cluster:
                let message = try Envoy_Config_Cluster_V3_Cluster(serializedBytes: any.value)
                return validate(message.name) { () throws(XDSResourceError) in
                    .cluster(try XDSCluster(validating: message))
                }
            case .endpoints:
                let message = try Envoy_Config_Endpoint_V3_ClusterLoadAssignment(serializedBytes: any.value)
                return validate(message.clusterName) { () throws(XDSResourceError) in
                    .endpoints(try XDSEndpoints(validating: message))
                }
            }
        } catch {
            return .unnamed(XDSResourceError("", "the resource does not decode (\(error))"))
        }
    }

    private static func validate(_ name: String, _ body: () throws(XDSResourceError) -> XDSResource) -> Outcome {
        guard !name.isEmpty, name.utf8.count <= XDSLimits.stringBytes else {
            return .unnamed(XDSResourceError("name", "is empty or longer than \(XDSLimits.stringBytes) bytes"))
        }
        do {
            return .valid(name: name, try body())
        } catch {
            return .invalid(name: name, error)
        }
    }
}
