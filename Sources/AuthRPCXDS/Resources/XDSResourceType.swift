/// The four kinds of resource a proxyless client asks the control plane for (gRFC A27), each by
/// its real type URL.
enum XDSResourceType: String, Sendable, Hashable, CaseIterable {
    /// LDS: the listener named by the channel's target.
    case listener = "type.googleapis.com/envoy.config.listener.v3.Listener"
    /// RDS: the route configuration a listener names.
    case routeConfiguration = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration"
    /// CDS: a cluster a route sends calls to.
    case cluster = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
    /// EDS: a cluster's endpoints.
    case endpoints = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"

    /// The type URL.
    var typeURL: String { rawValue }

    /// The type URL of the HTTP connection manager an API listener carries.
    static let httpConnectionManagerTypeURL =
        "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"
    /// The type URL of the router, the HTTP filter that must come last.
    static let routerFilterTypeURL = "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"
}
