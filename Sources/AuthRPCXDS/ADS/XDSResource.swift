/// A validated resource of any of the four types.
enum XDSResource: Sendable, Hashable {
    case listener(XDSListener)
    case routeConfiguration(XDSRouteConfiguration)
    case cluster(XDSCluster)
    case endpoints(XDSEndpoints)
}
