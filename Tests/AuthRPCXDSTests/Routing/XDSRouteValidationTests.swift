import SwiftProtobuf
import Testing

@testable import AuthRPCXDS

typealias RouteProto = Envoy_Config_Route_V3_Route
typealias HeaderProto = Envoy_Config_Route_V3_HeaderMatcher

/// Routes and route configurations as a control plane sends them.
enum RouteFixtures {
    static func route(
        prefix: String? = "",
        cluster: String = "c",
        headers: [HeaderProto] = [],
        configure: (inout RouteProto) -> Void = { _ in }
    ) -> RouteProto {
        var route = RouteProto()
        if let prefix { route.match.prefix = prefix } else { route.match = .init() }
        route.match.headers = headers
        route.route.cluster = cluster
        configure(&route)
        return route
    }

    static func header(
        _ name: String,
        _ kind: HeaderProto.OneOf_HeaderMatchSpecifier?,
        inverted: Bool = false
    )
        -> HeaderProto
    {
        var header = HeaderProto()
        header.name = name
        header.headerMatchSpecifier = kind
        header.invertMatch = inverted
        return header
    }

    static func configuration(
        _ routes: [RouteProto],
        domains: [String] = ["*"]
    ) -> Envoy_Config_Route_V3_RouteConfiguration {
        var host = Envoy_Config_Route_V3_VirtualHost()
        host.name = "host"
        host.domains = domains
        host.routes = routes
        var config = Envoy_Config_Route_V3_RouteConfiguration()
        config.name = "routes"
        config.virtualHosts = [host]
        return config
    }

    static func weighted(_ clusters: [(String, UInt32?)]) -> Envoy_Config_Route_V3_WeightedCluster {
        var weighted = Envoy_Config_Route_V3_WeightedCluster()
        weighted.clusters = clusters.map { name, weight in
            var cluster = Envoy_Config_Route_V3_WeightedCluster.ClusterWeight()
            cluster.name = name
            if let weight { cluster.weight = .init(weight) }
            return cluster
        }
        return weighted
    }
}

@Suite("XDSRoute validation (gRFC A28)")
struct XDSRouteValidationTests {
    func nackField(_ routes: [RouteProto]) -> String? {
        do {
            _ = try XDSRouteConfiguration(validating: RouteFixtures.configuration(routes))
            return nil
        } catch {
            return error.field
        }
    }

    func validRoutes(_ routes: [RouteProto]) throws -> [XDSRoute] {
        try XDSRouteConfiguration(validating: RouteFixtures.configuration(routes)).virtualHosts[0].routes
    }

    @Test("a prefix route to a cluster; the first matching route wins")
    func firstMatchWins() throws {
        let routes = try validRoutes([
            RouteFixtures.route(prefix: "/pkg.Service/", cluster: "service"),
            RouteFixtures.route(configure: { $0.match.path = "/pkg.Service/Method" }),
            RouteFixtures.route(prefix: "", cluster: "default"),
        ])
        #expect(routes.count == 3)
        let path = "/pkg.Service/Method"
        let first = routes.first { $0.match.matches(path: path, header: { _ in nil }, randomPerMillion: 0) }
        #expect(first?.action == .cluster("service"))
        let other = routes.first { $0.match.matches(path: "/other.S/M", header: { _ in nil }, randomPerMillion: 0) }
        #expect(other?.action == .cluster("default"))
    }

    @Test("path and prefix mind case unless case_sensitive is false")
    func caseSensitivity() throws {
        let sensitive = try validRoutes([RouteFixtures.route(prefix: "/Pkg.S/")])[0]
        #expect(sensitive.match.matches(path: "/Pkg.S/M", header: { _ in nil }, randomPerMillion: 0))
        #expect(!sensitive.match.matches(path: "/pkg.s/M", header: { _ in nil }, randomPerMillion: 0))
        let insensitive = try validRoutes([
            RouteFixtures.route(configure: {
                $0.match.path = "/Pkg.S/Method"
                $0.match.caseSensitive = .init(false)
            })
        ])[0]
        #expect(insensitive.match.matches(path: "/pkg.s/METHOD", header: { _ in nil }, randomPerMillion: 0))
        #expect(!insensitive.match.matches(path: "/pkg.s/METHOD2", header: { _ in nil }, randomPerMillion: 0))
    }

    @Test("header matchers: each kind, invert, and an absent header failing all but present")
    func headerMatchers() throws {
        var ignoringCase = Envoy_Type_Matcher_V3_StringMatcher()
        ignoringCase.exact = "Canary"
        ignoringCase.ignoreCase = true
        var range = Envoy_Type_V3_Int64Range()
        range.start = 10
        range.end = 20
        let cases: [(HeaderProto, String?, Bool)] = [
            (RouteFixtures.header("X-Track", .exactMatch("canary")), "canary", true),
            (RouteFixtures.header("x-track", .exactMatch("canary")), "Canary", false),
            (RouteFixtures.header("x-track", .exactMatch("canary")), nil, false),
            (RouteFixtures.header("x-track", .exactMatch("canary"), inverted: true), "stable", true),
            (RouteFixtures.header("x-track", .exactMatch("canary"), inverted: true), nil, false),
            (RouteFixtures.header("x-track", .stringMatch(ignoringCase)), "CANARY", true),
            (RouteFixtures.header("x-track", .prefixMatch("can")), "canary", true),
            (RouteFixtures.header("x-track", .suffixMatch("ary")), "canary", true),
            (RouteFixtures.header("x-track", .containsMatch("nar")), "canary", true),
            (RouteFixtures.header("x-track", .containsMatch("xyz")), "canary", false),
            (RouteFixtures.header("x-track", .presentMatch(true)), "", true),
            (RouteFixtures.header("x-track", .presentMatch(true)), nil, false),
            (RouteFixtures.header("x-track", .presentMatch(false)), nil, true),
            (RouteFixtures.header("x-track", .presentMatch(true), inverted: true), nil, true),
            (RouteFixtures.header("x-n", .rangeMatch(range)), "10", true),
            (RouteFixtures.header("x-n", .rangeMatch(range)), "20", false),
            (RouteFixtures.header("x-n", .rangeMatch(range)), "x", false),
            (RouteFixtures.header("x-n", .rangeMatch(range), inverted: true), "x", true),
        ]
        for (header, value, expected) in cases {
            let route = try validRoutes([RouteFixtures.route(headers: [header])])[0]
            let matched = route.match.matches(
                path: "/a/b",
                header: { $0 == header.name.lowercased() ? value : nil },
                randomPerMillion: 0
            )
            #expect(matched == expected, "\(header.headerMatchSpecifier!) on \(value ?? "nil")")
        }
    }

    @Test("runtime_fraction takes that share of calls, in millionths, capped at all")
    func fraction() throws {
        var route = RouteFixtures.route()
        route.match.runtimeFraction.defaultValue.numerator = 50
        route.match.runtimeFraction.defaultValue.denominator = .hundred
        let half = try validRoutes([route])[0].match
        #expect(half.fractionPerMillion == 500_000)
        #expect(half.matches(path: "/a/b", header: { _ in nil }, randomPerMillion: 499_999))
        #expect(!half.matches(path: "/a/b", header: { _ in nil }, randomPerMillion: 500_000))
        route.match.runtimeFraction.defaultValue.numerator = 5_000_000
        route.match.runtimeFraction.defaultValue.denominator = .million
        #expect(try validRoutes([route])[0].match.fractionPerMillion == 1_000_000)
    }

    @Test("weighted clusters: zero weights dropped; none, zero in sum, past 32 bits or an empty name NACK")
    func weightedClusters() throws {
        var route = RouteFixtures.route()
        route.route.weightedClusters = RouteFixtures.weighted([("a", 3), ("b", 0), ("c", 1)])
        #expect(
            try validRoutes([route])[0].action
                == .weightedClusters([.init(name: "a", weight: 3), .init(name: "c", weight: 1)])
        )
        for clusters in [[], [("a", 0)], [("a", nil)], [("a", UInt32.max), ("b", 1)], [("", 1)]]
            as [[(String, UInt32?)]]
        {
            route.route.weightedClusters = RouteFixtures.weighted(clusters)
            #expect(nackField([route])?.hasPrefix("virtual_hosts[0].routes[0].route.weighted_clusters") == true)
        }
    }

    @Test("routes the client passes over: query parameters, cluster_header, a connect matcher")
    func ignoredRoutes() throws {
        let routes = try validRoutes([
            RouteFixtures.route(configure: { $0.match.queryParameters = [.init()] }),
            RouteFixtures.route(configure: { $0.route.clusterHeader = "x-cluster" }),
            RouteFixtures.route(configure: { $0.match.connectMatcher = .init() }),
            RouteFixtures.route(cluster: "kept"),
        ])
        #expect(routes.map(\.action) == [.cluster("kept")])
    }

    @Test("a redirect or a direct response is kept as an action that fails its calls")
    func unsupportedActions() throws {
        let routes = try validRoutes([
            RouteFixtures.route(configure: { $0.redirect = .init() }),
            RouteFixtures.route(configure: { $0.directResponse = .init() }),
        ])
        for route in routes {
            guard case .unsupported(let text) = route.action else {
                Issue.record("not unsupported: \(route.action)")
                continue
            }
            #expect(text.contains("a gRPC client"))
        }
    }

    @Test("what NACKs names its field")
    func nacks() {
        #expect(nackField([RouteFixtures.route(prefix: nil)]) == "virtual_hosts[0].routes[0].match")
        #expect(
            nackField([RouteFixtures.route(configure: { $0.match.safeRegex.regex = ".*" })])
                == "virtual_hosts[0].routes[0].match.safe_regex"
        )
        #expect(nackField([RouteFixtures.route(configure: { $0.action = nil })]) == "virtual_hosts[0].routes[0].action")
        #expect(nackField([RouteFixtures.route(cluster: "")]) == "virtual_hosts[0].routes[0].route.cluster")
        #expect(
            nackField([RouteFixtures.route(headers: [RouteFixtures.header("x", nil)])])
                == "virtual_hosts[0].routes[0].match.headers[0]"
        )
        var backwards = Envoy_Type_V3_Int64Range()
        backwards.start = 5
        backwards.end = 1
        #expect(
            nackField([RouteFixtures.route(headers: [RouteFixtures.header("x", .rangeMatch(backwards))])])
                == "virtual_hosts[0].routes[0].match.headers[0].range_match"
        )
        var regex = Envoy_Type_Matcher_V3_RegexMatcher()
        regex.regex = "a+"
        #expect(
            nackField([RouteFixtures.route(headers: [RouteFixtures.header("x", .safeRegexMatch(regex))])])
                == "virtual_hosts[0].routes[0].match.headers[0].safe_regex_match"
        )
        do {
            _ = try XDSRouteConfiguration(validating: RouteFixtures.configuration([], domains: ["a.*.b"]))
            Issue.record("accepted a bad domain")
        } catch {
            #expect(error.field == "virtual_hosts[0].domains[0]")
        }
    }

    @Test("max_stream_duration: grpc_timeout_header_max first (gRFC A31); a negative duration NACKs")
    func maxStreamDuration() throws {
        var route = RouteFixtures.route()
        route.route.maxStreamDuration.maxStreamDuration = .init(seconds: 30)
        #expect(try validRoutes([route])[0].maxStreamDuration == .seconds(30))
        route.route.maxStreamDuration.grpcTimeoutHeaderMax = .init(seconds: 2, nanos: 500_000_000)
        #expect(try validRoutes([route])[0].maxStreamDuration == .milliseconds(2500))
        route.route.maxStreamDuration.grpcTimeoutHeaderMax = .init(seconds: -1)
        #expect(
            nackField([route]) == "virtual_hosts[0].routes[0].route.max_stream_duration.grpc_timeout_header_max"
        )
        #expect(try validRoutes([RouteFixtures.route()])[0].maxStreamDuration == nil)
    }

    @Test("bounds: too many virtual hosts, routes or header matchers NACK")
    func bounds() {
        var config = RouteFixtures.configuration([RouteFixtures.route()])
        config.virtualHosts = Array(repeating: config.virtualHosts[0], count: XDSLimits.virtualHosts + 1)
        #expect(throws: XDSResourceError.self) { _ = try XDSRouteConfiguration(validating: config) }
        let many = Array(
            repeating: RouteFixtures.header("x", .presentMatch(true)),
            count: XDSLimits.headerMatchersPerRoute + 1
        )
        #expect(nackField([RouteFixtures.route(headers: many)]) == "virtual_hosts[0].routes[0].match.headers")
    }
}
