/// Where one call goes under a virtual host's routes (gRFC A28): the first route that matches,
/// then its cluster, or a cluster of its weighted set picked at random by weight.
enum XDSCallRouting {
    /// The outcome for one call.
    enum Decision: Sendable, Hashable {
        /// Send the call to this cluster, its deadline capped by `maxStreamDuration` (gRFC A31).
        case cluster(String, maxStreamDuration: Duration?)
        /// Fail the call UNAVAILABLE with this text.
        case unavailable(String)
    }

    /// Routes a call.
    ///
    /// - Parameters:
    ///   - path: the call's `/package.Service/Method`.
    ///   - headerValues: the call's metadata values for a (lowercased) name, in order.
    ///   - random: where the fraction and weighted picks come from.
    static func decide(
        _ host: XDSVirtualHost,
        path: String,
        headerValues: (String) -> [String],
        using random: inout some RandomNumberGenerator
    ) -> Decision {
        let roll = UInt32.random(in: 0..<1_000_000, using: &random)
        guard
            let route = host.routes.first(where: {
                $0.match.matches(path: path, header: { header(named: $0, headerValues) }, randomPerMillion: roll)
            })
        else {
            return .unavailable("no route of virtual host '\(host.name)' matches \(path)")
        }
        switch route.action {
        case .cluster(let name):
            return .cluster(name, maxStreamDuration: route.maxStreamDuration)
        case .weightedClusters(let clusters):
            let total = clusters.reduce(UInt64(0)) { $0 + UInt64($1.weight) }
            var point = UInt64.random(in: 0..<total, using: &random)
            for cluster in clusters {
                if point < UInt64(cluster.weight) {
                    return .cluster(cluster.name, maxStreamDuration: route.maxStreamDuration)
                }
                point -= UInt64(cluster.weight)
            }
            // Unreachable: the points run over the weights' sum exactly.
            return .cluster(clusters[clusters.count - 1].name, maxStreamDuration: route.maxStreamDuration)
        case .unsupported(let reason):
            return .unavailable(reason)
        }
    }

    /// A header's value as route matching sees it (gRFC A28): `content-type` is
    /// `application/grpc`; binary (`-bin`) headers and gRPC's own `grpc-` headers are absent;
    /// several values are joined with `,`.
    static func header(named name: String, _ values: (String) -> [String]) -> String? {
        if name == "content-type" { return "application/grpc" }
        if name.hasSuffix("-bin") || name.hasPrefix("grpc-") { return nil }
        let found = values(name)
        return found.isEmpty ? nil : found.joined(separator: ",")
    }
}
