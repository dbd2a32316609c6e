internal import SwiftProtobuf

extension XDSListener {
    /// Validates a listener as gRFC A27 and A39 say: an `api_listener` holding an
    /// `HttpConnectionManager`, whose routes are either `rds` (from ADS or the same server) or an
    /// inline `route_config`, and whose HTTP filters end with the router; a filter this client
    /// does not know NACKs unless it is optional, and no filter may appear twice.
    init(validating message: Envoy_Config_Listener_V3_Listener) throws(XDSResourceError) {
        guard message.hasApiListener, message.apiListener.hasApiListener else {
            throw XDSResourceError("api_listener", "is required (this client has no socket listener)")
        }
        let any = message.apiListener.apiListener
        guard any.typeURL == XDSResourceType.httpConnectionManagerTypeURL else {
            throw XDSResourceError("api_listener.api_listener", "is '\(any.typeURL)', not an HttpConnectionManager")
        }
        let manager: Envoy_Extensions_Filters_Network_HttpConnectionManager_V3_HttpConnectionManager
        do {
            manager = try .init(serializedBytes: any.value)
        } catch {
            throw XDSResourceError("api_listener.api_listener", "the HttpConnectionManager does not decode (\(error))")
        }
        let routes: Routes
        switch manager.routeSpecifier {
        case .rds(let rds):
            switch rds.configSource.configSourceSpecifier {
            case .ads, .self_p: break
            default:
                throw XDSResourceError("http_connection_manager.rds.config_source", "must be ads or self")
            }
            guard !rds.routeConfigName.isEmpty, rds.routeConfigName.utf8.count <= XDSLimits.stringBytes else {
                throw XDSResourceError("http_connection_manager.rds.route_config_name", "is empty or too long")
            }
            routes = .rds(rds.routeConfigName)
        case .routeConfig(let inline):
            do {
                routes = .inline(try XDSRouteConfiguration(validating: inline))
            } catch {
                throw error.under("http_connection_manager.route_config")
            }
        case .scopedRoutes:
            throw XDSResourceError("http_connection_manager.scoped_routes", "scoped routes are not supported")
        case nil:
            throw XDSResourceError("http_connection_manager", "neither rds nor route_config")
        }
        try Self.checkFilters(manager.httpFilters)
        self.init(name: message.name, routes: routes)
    }

    private static func checkFilters(
        _ filters: [Envoy_Extensions_Filters_Network_HttpConnectionManager_V3_HttpFilter]
    ) throws(XDSResourceError) {
        guard filters.count <= XDSLimits.httpFilters else {
            throw XDSResourceError("http_connection_manager.http_filters", "more than \(XDSLimits.httpFilters)")
        }
        guard let last = filters.last else {
            throw XDSResourceError("http_connection_manager.http_filters", "empty: the router must be the last filter")
        }
        var names: Set<String> = []
        for (index, filter) in filters.enumerated() {
            let field = "http_connection_manager.http_filters[\(index)]"
            guard !filter.name.isEmpty else { throw XDSResourceError("\(field).name", "is empty") }
            guard names.insert(filter.name).inserted else {
                throw XDSResourceError("\(field).name", "'\(filter.name)' appears twice")
            }
            guard case .typedConfig(let config) = filter.configType else {
                if filter.isOptional { continue }
                throw XDSResourceError("\(field).typed_config", "is required")
            }
            let isRouter = config.typeURL == XDSResourceType.routerFilterTypeURL
            if isRouter, filter != last {
                throw XDSResourceError(field, "the router must be the last filter")
            }
            if !isRouter, !filter.isOptional {
                throw XDSResourceError("\(field).typed_config", "unsupported filter '\(config.typeURL)'")
            }
        }
        guard case .typedConfig(let config) = last.configType, config.typeURL == XDSResourceType.routerFilterTypeURL
        else {
            throw XDSResourceError("http_connection_manager.http_filters", "the last filter is not the router")
        }
    }
}
