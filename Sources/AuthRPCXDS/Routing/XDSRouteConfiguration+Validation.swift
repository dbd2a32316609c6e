internal import SwiftProtobuf

extension XDSRouteConfiguration {
    /// Validates a route configuration as gRFC A28 says: what the client cannot honour NACKs
    /// (a regex, a header matcher without a kind, an empty cluster name, weights that sum to zero
    /// or overflow, a bad domain pattern); what it may pass over is passed over (a route with
    /// query parameter matchers or a `cluster_header` action is dropped, `grpc` and `tls_context`
    /// matchers are ignored, a redirect fails the calls it matches).
    init(validating message: Envoy_Config_Route_V3_RouteConfiguration) throws(XDSResourceError) {
        guard message.virtualHosts.count <= XDSLimits.virtualHosts else {
            throw XDSResourceError("virtual_hosts", "more than \(XDSLimits.virtualHosts) virtual hosts")
        }
        var hosts: [XDSVirtualHost] = []
        for (index, host) in message.virtualHosts.enumerated() {
            do {
                hosts.append(try Self.virtualHost(host))
            } catch {
                throw error.under("virtual_hosts[\(index)]")
            }
        }
        self.init(name: message.name, virtualHosts: hosts)
    }

    private static func virtualHost(
        _ message: Envoy_Config_Route_V3_VirtualHost
    ) throws(XDSResourceError)
        -> XDSVirtualHost
    {
        guard message.domains.count <= XDSLimits.domainsPerVirtualHost else {
            throw XDSResourceError("domains", "more than \(XDSLimits.domainsPerVirtualHost) domains")
        }
        guard !message.domains.isEmpty else { throw XDSResourceError("domains", "a virtual host has no domain") }
        var domains: [XDSDomainPattern] = []
        for (index, domain) in message.domains.enumerated() {
            guard domain.utf8.count <= XDSLimits.stringBytes else {
                throw XDSResourceError("domains[\(index)]", "longer than \(XDSLimits.stringBytes) bytes")
            }
            do {
                domains.append(try XDSDomainPattern(parsing: domain))
            } catch {
                throw error.under("domains[\(index)]")
            }
        }
        guard message.routes.count <= XDSLimits.routesPerVirtualHost else {
            throw XDSResourceError("routes", "more than \(XDSLimits.routesPerVirtualHost) routes")
        }
        var routes: [XDSRoute] = []
        for (index, route) in message.routes.enumerated() {
            do {
                if let route = try XDSRoute(validating: route) { routes.append(route) }
            } catch {
                throw error.under("routes[\(index)]")
            }
        }
        return XDSVirtualHost(name: message.name, domains: domains, routes: routes)
    }
}
