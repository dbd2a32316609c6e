import Testing

@testable import AuthRPCXDS

@Suite("XDSDomainPattern and virtual host selection")
struct XDSDomainPatternTests {
    static func host(_ name: String, _ domains: [String]) throws -> XDSVirtualHost {
        XDSVirtualHost(name: name, domains: try domains.map { try XDSDomainPattern(parsing: $0) }, routes: [])
    }

    @Test("each kind of pattern matches as Envoy does, ignoring case, a wildcard taking one character at least")
    func kinds() throws {
        let cases: [(String, String, Bool)] = [
            ("payments", "payments", true),
            ("Payments.Example.com", "payments.example.COM", true),
            ("payments", "payments2", false),
            ("*.example.com", "a.example.com", true),
            ("*.example.com", ".example.com", false),
            ("*.example.com", "example.com", false),
            ("*-east.example.com", "pay-east.example.com", true),
            ("payments.*", "payments.internal", true),
            ("payments.*", "payments.", false),
            ("pay*", "payments", true),
            ("*", "anything", true),
            ("*", "", true),
        ]
        for (pattern, host, expected) in cases {
            let parsed = try XDSDomainPattern(parsing: pattern)
            #expect(parsed.matches(lowercasedHost: host.lowercased()) == expected, "\(pattern) ~ \(host)")
        }
    }

    @Test("a star in the middle, two stars, or an empty domain is refused", arguments: ["a.*.com", "*.a.*", "**", ""])
    func invalid(pattern: String) {
        #expect(throws: XDSResourceError.self) { _ = try XDSDomainPattern(parsing: pattern) }
    }

    @Test("exact beats suffix beats prefix beats *, and within a kind the longest pattern wins")
    func bestMatch() throws {
        let config = XDSRouteConfiguration(
            name: "r",
            virtualHosts: [
                try Self.host("any", ["*"]),
                try Self.host("prefix", ["pay.*"]),
                try Self.host("longer-prefix", ["pay.ex*"]),
                try Self.host("suffix", ["*.com"]),
                try Self.host("longer-suffix", ["*.example.com"]),
                try Self.host("exact", ["pay.example.com"]),
            ]
        )
        #expect(config.virtualHost(for: "PAY.example.com")?.name == "exact")
        #expect(config.virtualHost(for: "api.example.com")?.name == "longer-suffix")
        #expect(config.virtualHost(for: "api.other.com")?.name == "suffix")
        #expect(config.virtualHost(for: "pay.example.org")?.name == "longer-prefix")
        #expect(config.virtualHost(for: "pay.x")?.name == "prefix")
        #expect(config.virtualHost(for: "payments")?.name == "any")
        let noDefault = XDSRouteConfiguration(name: "r", virtualHosts: [try Self.host("exact", ["a"])])
        #expect(noDefault.virtualHost(for: "b") == nil)
    }

    @Test("of two equal matches the first virtual host wins")
    func firstOfEquals() throws {
        let config = XDSRouteConfiguration(
            name: "r",
            virtualHosts: [try Self.host("first", ["*.a.com"]), try Self.host("second", ["*.b.com", "*.a.com"])]
        )
        #expect(config.virtualHost(for: "x.a.com")?.name == "first")
    }
}
