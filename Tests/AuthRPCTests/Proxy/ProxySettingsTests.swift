import AuthRPCTransport
import Testing

@testable import AuthRPC

@Suite("Proxy settings: the environment, proxy URLs and no_proxy lists (gRFC A1, C-core's order)")
struct ProxySettingsTests {
    private func settings(
        _ environment: [String: String],
        _ configuration: ProxyConfiguration = .environment
    ) throws(RPCError) -> ProxySettings {
        try ProxySettings(configuration) { environment[$0] }
    }

    private func proxy(_ settings: ProxySettings) -> String? {
        guard case .proxy(let proxy, _) = settings.route(to: HostAndPort(host: "api.example.com", port: 443)) else {
            return nil
        }
        return proxy.address.description
    }

    @Test("grpc_proxy, then https_proxy, then http_proxy; lower case before upper case; the first set wins")
    func variableOrder() throws {
        let all = [
            "grpc_proxy": "g:1", "GRPC_PROXY": "G:2", "https_proxy": "s:3", "HTTPS_PROXY": "S:4",
            "http_proxy": "h:5", "HTTP_PROXY": "H:6",
        ]
        var environment = all
        for expected in ["g:1", "G:2", "s:3", "S:4", "h:5", "H:6"] {
            #expect(proxy(try settings(environment)) == expected)
            environment = environment.filter { $0.value != expected }
        }
        #expect(proxy(try settings(environment)) == nil)
    }

    @Test("a variable set but empty means no proxy, as in C-core")
    func emptyMeansNone() throws {
        #expect(proxy(try settings(["grpc_proxy": "", "https_proxy": "proxy:3128"])) == nil)
        #expect(proxy(try settings(["https_proxy": "  "])) == nil)
    }

    @Test("HTTP_PROXY is passed over in a CGI program (httpoxy); http_proxy is not")
    func httpoxy() throws {
        #expect(proxy(try settings(["HTTP_PROXY": "evil:80", "REQUEST_METHOD": "GET"])) == nil)
        #expect(proxy(try settings(["http_proxy": "ok:80", "REQUEST_METHOD": "GET"])) == "ok:80")
        #expect(proxy(try settings(["HTTP_PROXY": "plain:80"])) == "plain:80")
    }

    @Test("an explicit proxy overrides the environment's; .direct ignores it")
    func explicit() throws {
        let environment = ["https_proxy": "env:1", "no_proxy": "api.example.com"]
        #expect(proxy(try settings(environment, .http("http://mine:2", noProxy: ""))) == "mine:2")
        // nil: the environment's no_proxy applies to the explicit proxy, as in C-core.
        #expect(proxy(try settings(environment, .http("http://mine:2"))) == nil)
        #expect(proxy(try settings(environment, .direct)) == nil)
    }

    @Test("proxy URLs: scheme optional, port 80 by default, IPv6 in brackets, credentials as Basic")
    func urls() throws {
        let cases: [(String, String, String?)] = [
            ("http://proxy.corp.example:3128", "proxy.corp.example:3128", nil),
            ("proxy.corp.example:3128/", "proxy.corp.example:3128", nil),
            ("HTTP://proxy.corp.example", "proxy.corp.example:80", nil),
            ("http://[fd00::1]:8080", "[fd00::1]:8080", nil),
            // RFC 7617: base64 of "user:pa ss@word" (percent-decoded first).
            ("http://user:pa%20ss%40word@proxy:3128", "proxy:3128", "Basic dXNlcjpwYSBzc0B3b3Jk"),
            ("http://alice:secret@proxy:3128", "proxy:3128", "Basic YWxpY2U6c2VjcmV0"),
        ]
        for (text, address, authorization) in cases {
            let url = try ProxyURL(parsing: text, from: "test")
            #expect(url.address.description == address, "\(text)")
            #expect(url.authorization == authorization, "\(text)")
            #expect(!url.description.contains("secret"))
        }
    }

    @Test("unusable proxy URLs are invalidArgument, naming the variable, never repeating a password")
    func badURLs() {
        let bad = [
            "https://proxy:443", "socks5://proxy:1080", "http://", "http://proxy:0", "http://proxy:99999",
            "http://proxy:3128/path", "http://proxy:3128?x=1", "http://us%zzer:secret@proxy:1", "http://pro xy:1",
            "http://proxy:abc",
        ]
        for text in bad {
            let error = #expect(throws: RPCError.self) { try settings(["https_proxy": text]) }
            #expect(error?.code == .invalidArgument, "\(text)")
            #expect(error?.message.contains("https_proxy") == true, "\(text): \(String(describing: error))")
            #expect(error?.message.contains("secret") == false, "\(text)")
        }
        let error = #expect(throws: RPCError.self) { try settings([:], .http("socks5://p:1")) }
        #expect(error?.message.contains("only http:// proxies") == true, "\(String(describing: error))")
    }

    @Test("no_proxy: *, names and the names under them at a dot boundary, IPs, CIDR ranges, ports")
    func exclusions() throws {
        let list = try NoProxyList(
            parsing: " .internal.example , Corp.Example., *.wild.example,10.0.0.0/8, fd00::/8 ,192.0.2.7,"
                + "only-tls.example:443,[2001:db8::1]:8443, 198.51.100.9:50051",
            from: "no_proxy"
        )
        let bypassed: [(String, Int)] = [
            ("internal.example", 443), ("a.internal.example", 443), ("corp.example", 1), ("API.CORP.EXAMPLE.", 443),
            ("x.wild.example", 443), ("wild.example", 443), ("10.1.2.3", 443), ("fd12::5", 443), ("192.0.2.7", 80),
            ("only-tls.example", 443), ("2001:db8::1", 8443), ("198.51.100.9", 50051),
        ]
        for (host, port) in bypassed {
            #expect(list.contains(host: host, port: port), "\(host):\(port)")
        }
        let proxied: [(String, Int)] = [
            ("badcorp.example", 443), ("corp.example.com", 443), ("11.0.0.1", 443), ("fe80::1", 443),
            ("192.0.2.8", 443), ("only-tls.example", 8443), ("2001:db8::1", 443), ("198.51.100.9", 443),
            // A name is never resolved to match an address range.
            ("ten.example", 443),
        ]
        for (host, port) in proxied {
            #expect(!list.contains(host: host, port: port), "\(host):\(port)")
        }
        #expect(try NoProxyList(parsing: "a.example, *", from: "no_proxy").contains(host: "anything", port: 1))
        #expect(try !NoProxyList(parsing: " , ,", from: "no_proxy").contains(host: "anything", port: 1))
    }

    @Test("unusable no_proxy entries are invalidArgument, naming the variable and the entry")
    func badExclusions() {
        for entry in ["10.0.0.0/33", "fd00::/129", "10.0.0.0/x", "name/8", "host:0", "host:70000", "[::1", "a b", "*."]
        {
            let error = #expect(throws: RPCError.self) {
                try settings(["https_proxy": "proxy:3128", "no_grpc_proxy": "ok.example,\(entry)"])
            }
            #expect(error?.code == .invalidArgument, "\(entry)")
            #expect(error?.message.contains("no_grpc_proxy") == true, "\(entry): \(String(describing: error))")
        }
    }

    @Test("targets on this machine never go through a proxy")
    func loopback() throws {
        let settings = try settings(["https_proxy": "proxy:3128"])
        for host in ["localhost", "LOCALHOST.", "app.localhost", "127.0.0.1", "127.9.9.9", "::1"] {
            #expect(!settings.usesProxy(host: host, port: 443), "\(host)")
        }
        #expect(settings.usesProxy(host: "128.0.0.1", port: 443))
        #expect(settings.usesProxy(host: "localhost.example", port: 443))
    }

    @Test("a channel with unusable proxy settings is refused when it is made")
    func channelRefusesBadProxy() {
        let error = #expect(throws: RPCError.self) {
            try Channel(target: "api.example.com:443", proxy: .http("http://proxy:3128", noProxy: "10.0.0.0/99"))
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("10.0.0.0/99") == true, "\(String(describing: error))")
        #expect(ProxyConfiguration.http("http://u:secret@p:1").description == "http://p:1")
    }
}
