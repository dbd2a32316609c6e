/// A route of a virtual host: a match, where the call goes, and the call's longest duration.
struct XDSRoute: Sendable, Hashable {
    /// Where a matched call goes.
    enum Action: Sendable, Hashable {
        /// One cluster.
        case cluster(String)
        /// Clusters picked at random in proportion to their weights (each weight > 0 kept; the
        /// sum is greater than zero and fits in 32 bits).
        case weightedClusters([WeightedCluster])
        /// An action a client cannot take (a redirect, a direct response, ...): the call fails
        /// UNAVAILABLE with this text, as gRFC A28 says.
        case unsupported(String)
    }

    /// A cluster of a weighted action.
    struct WeightedCluster: Sendable, Hashable {
        let name: String
        let weight: UInt32
    }

    let name: String
    let match: XDSRouteMatch
    let action: Action
    /// gRFC A31: `max_stream_duration.grpc_timeout_header_max` if set, else
    /// `max_stream_duration.max_stream_duration`; a call's deadline is capped by it (nil or zero:
    /// no cap).
    let maxStreamDuration: Duration?
}
