internal import SwiftProtobuf

extension XDSRoute {
    /// Validates a route (gRFC A28, A31, A63). Returns nil for a route the client ignores: one
    /// with `query_parameters` (gRPC has none), a path specifier it does not know
    /// (`connect_matcher`, `path_separated_prefix`), or an action that names its cluster by a
    /// header or a plugin.
    ///
    /// - Throws: the NACK reason: no path specifier, a `safe_regex` (this client has no RE2
    ///   engine), a bad header matcher, no action, an empty cluster, bad weights, a bad duration.
    init?(validating message: Envoy_Config_Route_V3_Route) throws(XDSResourceError) {
        guard message.hasMatch else { throw XDSResourceError("match", "is required") }
        guard let match = try Self.match(message.match) else { return nil }

        let action: Action
        var maxStreamDuration: Duration?
        switch message.action {
        case .route(let route):
            switch route.clusterSpecifier {
            case .cluster(let name):
                action = .cluster(try Self.clusterName(name, "route.cluster"))
            case .weightedClusters(let weighted):
                action = try Self.weighted(weighted)
            case .clusterHeader, .clusterSpecifierPlugin, .inlineClusterSpecifierPlugin:
                return nil
            case nil:
                throw XDSResourceError("route", "no cluster specifier")
            }
            if route.hasMaxStreamDuration {
                let limits = route.maxStreamDuration
                let field = limits.hasGrpcTimeoutHeaderMax ? "grpc_timeout_header_max" : "max_stream_duration"
                if limits.hasGrpcTimeoutHeaderMax || limits.hasMaxStreamDuration {
                    let value = limits.hasGrpcTimeoutHeaderMax ? limits.grpcTimeoutHeaderMax : limits.maxStreamDuration
                    do {
                        maxStreamDuration = try XDSDuration.validated(value)
                    } catch {
                        throw error.under("route.max_stream_duration.\(field)")
                    }
                }
            }
        case .redirect:
            action = .unsupported("the matched route is a redirect, which a gRPC client does not follow")
        case .directResponse:
            action = .unsupported("the matched route is a direct response, which a gRPC client does not serve")
        case .filterAction, .nonForwardingAction:
            action = .unsupported("the matched route has an action a gRPC client does not take")
        case nil:
            throw XDSResourceError("action", "is required")
        }
        self.init(name: message.name, match: match, action: action, maxStreamDuration: maxStreamDuration)
    }

    private static func clusterName(_ name: String, _ field: String) throws(XDSResourceError) -> String {
        guard !name.isEmpty else { throw XDSResourceError(field, "the cluster name is empty") }
        guard name.utf8.count <= XDSLimits.stringBytes else {
            throw XDSResourceError(field, "longer than \(XDSLimits.stringBytes) bytes")
        }
        return name
    }

    private static func weighted(_ message: Envoy_Config_Route_V3_WeightedCluster) throws(XDSResourceError) -> Action {
        guard !message.clusters.isEmpty else {
            throw XDSResourceError("route.weighted_clusters", "has no cluster")
        }
        guard message.clusters.count <= XDSLimits.weightedClusters else {
            throw XDSResourceError("route.weighted_clusters", "more than \(XDSLimits.weightedClusters) clusters")
        }
        var clusters: [WeightedCluster] = []
        var total: UInt64 = 0
        for (index, cluster) in message.clusters.enumerated() {
            let field = "route.weighted_clusters.clusters[\(index)]"
            let name = try clusterName(cluster.name, "\(field).name")
            total += UInt64(cluster.weight.value)
            // A cluster of weight zero (or none) never receives a call.
            if cluster.weight.value > 0 { clusters.append(WeightedCluster(name: name, weight: cluster.weight.value)) }
        }
        guard total > 0 else { throw XDSResourceError("route.weighted_clusters", "the weights sum to zero") }
        guard total <= UInt64(UInt32.max) else {
            throw XDSResourceError("route.weighted_clusters", "the weights sum to more than \(UInt32.max)")
        }
        return .weightedClusters(clusters)
    }

    private static func match(_ message: Envoy_Config_Route_V3_RouteMatch) throws(XDSResourceError) -> XDSRouteMatch? {
        let path: XDSRouteMatch.Path
        switch message.pathSpecifier {
        case .prefix(let prefix):
            guard prefix.utf8.count <= XDSLimits.stringBytes else {
                throw XDSResourceError("match.prefix", "longer than \(XDSLimits.stringBytes) bytes")
            }
            path = .prefix(prefix)
        case .path(let exact):
            guard exact.utf8.count <= XDSLimits.stringBytes else {
                throw XDSResourceError("match.path", "longer than \(XDSLimits.stringBytes) bytes")
            }
            path = .exact(exact)
        case .safeRegex:
            throw XDSResourceError("match.safe_regex", "regular expressions are not supported by this client")
        case .connectMatcher, .pathSeparatedPrefix:
            return nil
        case nil:
            throw XDSResourceError("match", "no path specifier (prefix, path or safe_regex)")
        }
        guard message.queryParameters.isEmpty else { return nil }
        guard message.headers.count <= XDSLimits.headerMatchersPerRoute else {
            throw XDSResourceError("match.headers", "more than \(XDSLimits.headerMatchersPerRoute) header matchers")
        }
        var headers: [XDSHeaderMatcher] = []
        for (index, header) in message.headers.enumerated() {
            do {
                headers.append(try XDSHeaderMatcher(validating: header))
            } catch {
                throw error.under("match.headers[\(index)]")
            }
        }
        var fraction: UInt32?
        if message.hasRuntimeFraction {
            let percent = message.runtimeFraction.defaultValue
            let scale: UInt64
            switch percent.denominator {
            case .hundred: scale = 10_000
            case .tenThousand: scale = 100
            case .million: scale = 1
            case .UNRECOGNIZED(let value):
                throw XDSResourceError("match.runtime_fraction.default_value.denominator", "unknown value \(value)")
            }
            fraction = UInt32(min(UInt64(percent.numerator) * scale, 1_000_000))
        }
        return XDSRouteMatch(
            path: path,
            caseSensitive: message.hasCaseSensitive ? message.caseSensitive.value : true,
            headers: headers,
            fractionPerMillion: fraction
        )
    }
}
