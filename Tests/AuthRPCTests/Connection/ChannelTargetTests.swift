import AuthRPCTransport
import Testing

@testable import AuthRPC

@Suite("Channel targets")
struct ChannelTargetTests {
    @Test(
        "host:port, [v6]:port, bare hosts and dns: URIs are names to look up, shown as host:port",
        arguments: [
            ("example.com:8443", "example.com", 8443),
            ("example.com", "example.com", 443),
            ("127.0.0.1:50051", "127.0.0.1", 50051),
            ("[::1]:50051", "::1", 50051),
            ("[::1]", "::1", 443),
            ("dns:///backend.default.svc.cluster.local:50051", "backend.default.svc.cluster.local", 50051),
            ("dns:///example.com", "example.com", 443),
            ("dns:example.com:80", "example.com", 80),
            ("DNS:///example.com:80", "example.com", 80),
        ]
    )
    func names(text: String, host: String, port: Int) throws {
        let target = try ChannelTarget(parsing: text)
        #expect(target.endpoint == .name(HostAndPort(host: host, port: port)))
        let expected = HostAndPort(host: host, port: port).description
        #expect(target.description == expected)
        #expect(target.authority == expected)
        #expect(target.serverName == host)
    }

    @Test("ipv4: and ipv6: lists are fixed addresses; the first is the authority")
    func addressLists() throws {
        let v4 = try ChannelTarget(parsing: "ipv4:127.0.0.1:50051,127.0.0.2,127.0.0.3:7")
        #expect(
            v4.endpoint
                == .addresses([
                    try SocketAddress(ipAddress: "127.0.0.1", port: 50051),
                    try SocketAddress(ipAddress: "127.0.0.2", port: 443),
                    try SocketAddress(ipAddress: "127.0.0.3", port: 7),
                ])
        )
        #expect(v4.authority == "127.0.0.1:50051")
        #expect(v4.serverName == "127.0.0.1")
        #expect(v4.description == "ipv4:127.0.0.1:50051,127.0.0.2,127.0.0.3:7")

        let v6 = try ChannelTarget(parsing: "ipv6:[::1]:50051,::2,[2001:db8::1]")
        #expect(
            v6.endpoint
                == .addresses([
                    try SocketAddress(ipAddress: "::1", port: 50051),
                    try SocketAddress(ipAddress: "::2", port: 443),
                    try SocketAddress(ipAddress: "2001:db8::1", port: 443),
                ])
        )
        #expect(v6.authority == "[::1]:50051")
    }

    @Test("unix: and unix-abstract: name one socket; the authority is localhost")
    func unixSockets() throws {
        for (text, shown) in [
            ("unix:/run/app.sock", "unix:/run/app.sock"),
            ("unix:///run/app.sock", "unix:/run/app.sock"),
            ("unix:relative.sock", "unix:relative.sock"),
            ("unix-abstract:authrpc-test", "unix-abstract:authrpc-test"),
        ] {
            let target = try ChannelTarget(parsing: text)
            guard case .addresses(let addresses) = target.endpoint else {
                Issue.record("\(text) is not an address")
                continue
            }
            #expect(addresses.map(\.description) == [shown])
            #expect(target.authority == "localhost")
            #expect(target.serverName == "localhost")
        }
        // The longest path sun_path holds works; one byte more does not.
        let longest = "/" + String(repeating: "a", count: SocketAddress.maximumUnixPathLength - 1)
        _ = try ChannelTarget(parsing: "unix:" + longest)
        _ = try ChannelTarget(
            parsing: "unix-abstract:" + String(repeating: "b", count: SocketAddress.maximumUnixPathLength)
        )
    }

    @Test(
        "bad targets are invalidArgument, naming what is wrong",
        arguments: [
            ("", "the host is empty"),
            (":443", "the host is empty"),
            ("host:0", "port"),
            ("host:70000", "port"),
            ("::1:443", "brackets"),
            ("[::1", "']'"),
            ("a b:1", "expected host:port"),
            ("https://x:1", "unknown scheme 'https'"),
            // `xds` is not here: AuthRPCXDS registers it (XDSScheme), in the same test process.
            ("grpclb:///backend", "unknown scheme 'grpclb'"),
            ("dns://8.8.8.8/example.com:443", "DNS server"),
            ("dns:", "the host is empty"),
            ("ipv4:", "empty"),
            ("ipv4:127.0.0.1,", "empty"),
            ("ipv4:example.com:80", "'example.com' is not an IPv4 address"),
            ("ipv4:::1", "is not an IPv4 address"),
            ("ipv4:127.0.0.1:http", "port"),
            ("ipv6:127.0.0.1", "is not an IPv6 address"),
            ("ipv6:[::1", "']'"),
            ("ipv6:[::1]x", "port"),
            ("unix:", "the unix socket path is empty"),
            ("unix://host/run/app.sock", "unix:///absolute/path"),
            ("unix:/" + String(repeating: "a", count: SocketAddress.maximumUnixPathLength), "at most"),
            ("unix-abstract:", "empty"),
            ("unix-abstract:" + String(repeating: "b", count: SocketAddress.maximumUnixPathLength + 1), "at most"),
        ]
    )
    func refuses(text: String, reason: String) {
        let error = #expect(throws: RPCError.self) { try ChannelTarget(parsing: text) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains(reason) == true, "\(String(describing: error))")
        #expect(error?.message.hasPrefix("invalid target") == true)
    }

    @Test("a bad target is refused by Channel.init, before anything is looked up")
    func channelRefuses() {
        let error = #expect(throws: RPCError.self) {
            try Channel(target: "unix-abstract:", transportSecurity: .plaintext)
        }
        #expect(error?.code == .invalidArgument)
    }

    @Test("through a proxy: a name is one proxied endpoint, a list one per address unless no_proxy names it")
    func endpointsThroughAProxy() throws {
        let proxy = try ProxySettings(.http("http://proxy.corp.example:3128", noProxy: "10.0.0.2"))
        let proxied = ProxyServer(address: HostAndPort(host: "proxy.corp.example", port: 3128))

        let name = try ChannelTarget(parsing: "dns:///api.example.com:443")
        #expect(
            name.endpoints(through: proxy) == [
                .proxied(proxied, target: HostAndPort(host: "api.example.com", port: 443))
            ]
        )
        #expect(name.endpoints(through: try ProxySettings(.direct)) == nil)

        let list = try ChannelTarget(parsing: "ipv4:10.0.0.1:50051,10.0.0.2:50051,127.0.0.1:50051")
        #expect(
            list.endpoints(through: proxy) == [
                .proxied(proxied, target: HostAndPort(host: "10.0.0.1", port: 50051)),
                .address(try SocketAddress(ipAddress: "10.0.0.2", port: 50051)),
                .address(try SocketAddress(ipAddress: "127.0.0.1", port: 50051)),
            ]
        )
        let unix = try ChannelTarget(parsing: "unix:/run/app.sock")
        #expect(unix.endpoints(through: proxy) == [.address(try SocketAddress(unixPath: "/run/app.sock"))])
    }

    @Test("a subchannel's route: adjacent addresses together (Happy Eyeballs), each proxied target its own tunnel")
    func routes() throws {
        let a = try SocketAddress(ipAddress: "10.0.0.1", port: 1)
        let b = try SocketAddress(ipAddress: "2001:db8::1", port: 1)
        let c = try SocketAddress(ipAddress: "10.0.0.3", port: 1)
        let proxy = ProxyServer(address: HostAndPort(host: "proxy", port: 3128))
        let target = HostAndPort(host: "10.0.0.2", port: 1)
        #expect(ConnectionRoute([.address(a), .address(b)]) == .addresses([a, b]))
        #expect(ConnectionRoute([.proxied(proxy, target: target)]) == .proxy(proxy, target: target))
        #expect(
            ConnectionRoute([.address(a), .address(b), .proxied(proxy, target: target), .address(c)])
                == .inTurn([.addresses([a, b]), .proxy(proxy, target: target), .addresses([c])])
        )
        #expect(
            ConnectionRoute([.address(a), .proxied(proxy, target: target)]).description
                == "10.0.0.1:1 or 10.0.0.2:1 via http://proxy:3128"
        )
    }
}
