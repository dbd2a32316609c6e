import AuthRPC
import SwiftProtobuf
import Testing

@testable import AuthRPCXDS

@Suite("XDSCallRouting")
struct XDSCallRoutingTests {
    static func host(_ routes: [RouteProto]) throws -> XDSVirtualHost {
        try XDSRouteConfiguration(validating: RouteFixtures.configuration(routes)).virtualHosts[0]
    }

    @Test("header-based routing, with the first matching route winning")
    func headers() throws {
        let host = try Self.host([
            RouteFixtures.route(cluster: "canary", headers: [RouteFixtures.header("x-track", .exactMatch("canary"))]),
            RouteFixtures.route(cluster: "stable"),
        ])
        var random = SplitMix64(seed: 1)
        let canary = XDSCallRouting.decide(
            host,
            path: "/a.S/M",
            headerValues: { $0 == "x-track" ? ["canary"] : [] },
            using: &random
        )
        #expect(canary == .cluster("canary", maxStreamDuration: nil))
        let stable = XDSCallRouting.decide(host, path: "/a.S/M", headerValues: { _ in [] }, using: &random)
        #expect(stable == .cluster("stable", maxStreamDuration: nil))
    }

    @Test("content-type reads application/grpc; -bin and grpc- headers are absent; values join with ','")
    func headerView() {
        let values: (String) -> [String] = { name in
            switch name {
            case "x-multi": ["a", "b"]
            case "x-key-bin", "grpc-timeout", "content-type": ["present"]
            default: []
            }
        }
        #expect(XDSCallRouting.header(named: "content-type", values) == "application/grpc")
        #expect(XDSCallRouting.header(named: "x-key-bin", values) == nil)
        #expect(XDSCallRouting.header(named: "grpc-timeout", values) == nil)
        #expect(XDSCallRouting.header(named: "x-multi", values) == "a,b")
        #expect(XDSCallRouting.header(named: "x-none", values) == nil)
    }

    @Test(
        "weighted clusters split 75/25 within 5 % over 2,000 calls, each call drawing from its own roll (here the worst case: consecutive numbers); the same roll routes the same way"
    )
    func weightedSplit() throws {
        var route = RouteFixtures.route()
        route.route.weightedClusters = RouteFixtures.weighted([("a", 75), ("b", 25)])
        let host = try Self.host([route])
        var counts: [String: Int] = [:]
        for roll in UInt64(0)..<2000 {
            var random = SplitMix64(seed: roll)
            let decision = XDSCallRouting.decide(host, path: "/a/b", headerValues: { _ in [] }, using: &random)
            var replay = SplitMix64(seed: roll)
            let replayed = XDSCallRouting.decide(host, path: "/a/b", headerValues: { _ in [] }, using: &replay)
            guard decision == replayed, case .cluster(let name, _) = decision else {
                Issue.record("roll \(roll): \(decision), then \(replayed)")
                return
            }
            counts[name, default: 0] += 1
        }
        #expect(abs(Double(counts["a", default: 0]) / 2000 - 0.75) <= 0.05, "\(counts)")
        #expect(abs(Double(counts["b", default: 0]) / 2000 - 0.25) <= 0.05, "\(counts)")
    }

    @Test("no matching route, or a redirect, fails the call UNAVAILABLE saying why; max_stream_duration travels")
    func failures() throws {
        var random = SplitMix64(seed: 7)
        let narrow = try Self.host([RouteFixtures.route(prefix: "/only.This/")])
        guard
            case .unavailable(let text) = XDSCallRouting.decide(
                narrow,
                path: "/a/b",
                headerValues: { _ in [] },
                using: &random
            )
        else {
            Issue.record("routed")
            return
        }
        #expect(text.contains("/a/b"))
        let redirect = try Self.host([RouteFixtures.route(configure: { $0.redirect = .init() })])
        #expect(
            XDSCallRouting.decide(redirect, path: "/a/b", headerValues: { _ in [] }, using: &random)
                == .unavailable("the matched route is a redirect, which a gRPC client does not follow")
        )
        var limited = RouteFixtures.route()
        limited.route.maxStreamDuration.maxStreamDuration = .init(seconds: 3)
        #expect(
            XDSCallRouting.decide(try Self.host([limited]), path: "/a/b", headerValues: { _ in [] }, using: &random)
                == .cluster("c", maxStreamDuration: .seconds(3))
        )
    }

    @Test(
        "a route takes every call for a path prefix of nothing or '/' with no header matcher or fraction, and then every path goes to it; any other first route does not"
    )
    func takesEveryCall() throws {
        let canary = RouteFixtures.header("x-track", .exactMatch("canary"))
        let cases: [(String, RouteProto, Bool)] = [
            ("empty prefix", RouteFixtures.route(prefix: ""), true),
            ("'/' prefix", RouteFixtures.route(prefix: "/"), true),
            (
                "'/' prefix, any case",
                RouteFixtures.route(prefix: "/", configure: { $0.match.caseSensitive = .init(false) }),
                true
            ),
            ("a service's prefix", RouteFixtures.route(prefix: "/a."), false),
            ("the exact path '/'", RouteFixtures.route(prefix: nil, configure: { $0.match.path = "/" }), false),
            ("'/' with a header matcher", RouteFixtures.route(prefix: "/", headers: [canary]), false),
            (
                "'/' with a fraction",
                RouteFixtures.route(
                    prefix: "/",
                    configure: {
                        $0.match.runtimeFraction.defaultValue.numerator = 50
                        $0.match.runtimeFraction.defaultValue.denominator = .hundred
                    }
                ),
                false
            ),
        ]
        for (name, route, takesEveryCall) in cases {
            let host = try Self.host([route, RouteFixtures.route(cluster: "other")])
            #expect(host.routes[0].match.takesEveryCall == takesEveryCall, "\(name)")
            guard takesEveryCall else { continue }
            // What the router answers without reading the routes is what reading them decides.
            for path in ["/a.S/M", "/grpc.testing.TestService/UnaryCall", "/B.s/m"] {
                var random = SplitMix64(seed: 3)
                let decision = XDSCallRouting.decide(
                    host,
                    path: path,
                    headerValues: { $0 == "x-track" ? ["canary"] : [] },
                    using: &random
                )
                #expect(decision == .cluster("c", maxStreamDuration: nil), "\(name), \(path)")
            }
        }
    }
}
