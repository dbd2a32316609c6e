/// The bounds on what the control plane may send: every count and length a hostile or broken
/// control plane could grow without end. A resource over one is NACKed, a response over one is
/// refused whole; none is near what a real mesh sends.
enum XDSLimits {
    /// Virtual hosts in one route configuration.
    static let virtualHosts = 1000
    /// Domains of one virtual host.
    static let domainsPerVirtualHost = 1000
    /// Routes in one virtual host.
    static let routesPerVirtualHost = 10_000
    /// Header matchers of one route.
    static let headerMatchersPerRoute = 100
    /// Clusters of one weighted-clusters action.
    static let weightedClusters = 1000
    /// Localities in one cluster load assignment (all priorities together).
    static let localities = 10_000
    /// Endpoints in one locality.
    static let endpointsPerLocality = 10_000
    /// HTTP filters of one listener.
    static let httpFilters = 100
    /// Length of any name or string matched against (resource names, domains, header values).
    static let stringBytes = 16 * 1024
    /// Resources in one response.
    static let resourcesPerResponse = 10_000
    /// Bytes of one ADS response message.
    static let responseBytes = 16 * 1024 * 1024
    /// Bytes of a `version_info` or a nonce.
    static let versionOrNonceBytes = 1024
}
