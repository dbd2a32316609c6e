/// The load-balancing tree an EDS cluster is balanced with (gRFC A27), as a value: priorities in
/// order, the first usable one serving (priority); within it a locality picked at random by
/// weight among those with a ready endpoint (weighted target); within the locality its ready
/// endpoints in turn (round robin). The connections are the caller's: it says how each endpoint
/// stands and whether a priority has been connecting past the failover timeout.
struct XDSClusterBalancer {
    /// How an endpoint's connection stands.
    enum EndpointState: Sendable, Hashable {
        case ready
        case connecting
        case failed
    }

    /// What a call gets.
    enum Pick: Sendable, Hashable {
        case endpoint(XDSEndpoints.Endpoint)
        /// Nothing is ready yet, but a priority is still connecting within its failover time:
        /// the call waits.
        case queue
        /// Every priority has failed: the call fails UNAVAILABLE with this text.
        case fail(String)
    }

    /// gRFC A27's failover timer: how long a priority may stay connecting before the next is tried.
    static let failoverTimeout: Duration = .seconds(10)

    let endpoints: XDSEndpoints
    /// The round-robin position of each locality, by priority and locality name.
    private var cursors: [String: Int] = [:]

    init(endpoints: XDSEndpoints) {
        self.endpoints = endpoints
    }

    /// Picks an endpoint for one call.
    ///
    /// - Parameters:
    ///   - state: how each endpoint's connection stands.
    ///   - failoverExpired: whether priority `p` has been connecting longer than
    ///     ``failoverTimeout``.
    ///   - random: where the weighted pick comes from.
    mutating func pick(
        state: (XDSEndpoints.Endpoint) -> EndpointState,
        failoverExpired: (Int) -> Bool,
        using random: inout some RandomNumberGenerator
    ) -> Pick {
        var stillConnecting = false
        for (priority, localities) in endpoints.priorities.enumerated() {
            var ready: [(locality: XDSEndpoints.Locality, endpoints: [XDSEndpoints.Endpoint])] = []
            var connecting = false
            for locality in localities {
                let usable = locality.endpoints.filter { state($0) == .ready }
                if !usable.isEmpty { ready.append((locality, usable)) }
                if locality.endpoints.contains(where: { state($0) == .connecting }) { connecting = true }
            }
            if !ready.isEmpty {
                return .endpoint(pickReady(ready, priority: priority, using: &random))
            }
            if connecting {
                stillConnecting = true
                if !failoverExpired(priority) { return .queue }
            }
        }
        if stillConnecting { return .queue }
        return .fail(
            endpoints.priorities.isEmpty
                ? "the cluster has no endpoints"
                : "no endpoint of any of the cluster's \(endpoints.priorities.count) priorities is reachable"
        )
    }

    private mutating func pickReady(
        _ ready: [(locality: XDSEndpoints.Locality, endpoints: [XDSEndpoints.Endpoint])],
        priority: Int,
        using random: inout some RandomNumberGenerator
    ) -> XDSEndpoints.Endpoint {
        let total = ready.reduce(UInt64(0)) { $0 + UInt64($1.locality.weight) }
        var point = UInt64.random(in: 0..<total, using: &random)
        var chosen = ready[ready.count - 1]
        for entry in ready {
            if point < UInt64(entry.locality.weight) {
                chosen = entry
                break
            }
            point -= UInt64(entry.locality.weight)
        }
        let key = "\(priority) \(chosen.locality.name)"
        let position = cursors[key, default: 0]
        cursors[key] = position &+ 1
        return chosen.endpoints[position % chosen.endpoints.count]
    }
}
