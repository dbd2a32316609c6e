import AuthRPC
import AuthSampleService
import Foundation
import TestSupport
import Testing

/// Channels through the hostile CONNECT proxy (Tests/Peers/hostile_proxy.py): every way a proxy
/// can fail ends the call `unavailable` with the proxy's answer in the message, well within the
/// call's deadline; a working tunnel carries h2c and TLS, and the proxy sees only `CONNECT`.
@Suite("HTTP CONNECT through a hostile proxy")
struct ProxyConnectTests {
    /// A channel to `target` through the hostile proxy; its attempts take at most
    /// `connectTimeout` (gRPC's 20 s unless given).
    private func channel(
        _ target: String,
        proxyCredentials: String = "",
        transportSecurity: TransportSecurity = .plaintext,
        defaultCallOptions: CallOptions = CallOptions(),
        connectTimeout: Duration = .seconds(20),
        loadBalancing: LoadBalancingPolicy = .pickFirst
    ) async throws -> Channel {
        let proxy = try await Peers.hostileProxy()
        let url = "http://\(proxyCredentials)\(proxy.host):\(proxy.port)"
        return try Channel(
            target: target,
            transportSecurity: transportSecurity,
            defaultCallOptions: defaultCallOptions,
            connectionBackoff: ConnectionBackoff(
                initial: .seconds(1),
                multiplier: 1.6,
                jitter: 0.2,
                maximum: .seconds(120),
                minimumConnectTimeout: connectTimeout
            ),
            proxy: .http(url, noProxy: ""),
            loadBalancing: loadBalancing
        )
    }

    /// The error of one call through the proxy to `target`, with a deadline far beyond the
    /// connect timeout.
    private func failure(_ target: String, connectTimeout: Duration = .seconds(20)) async throws -> RPCError? {
        let channel = try await channel(target, connectTimeout: connectTimeout)
        return await #expect(throws: RPCError.self) {
            try await FaultChannel.call(channel, "Echo", options: CallOptions(timeout: .seconds(60)))
        }
    }

    @Test(
        "a refusal (407, 403, 502) fails the call unavailable with the proxy's status line",
        arguments: [
            (407, "407 Proxy Authentication Required"), (403, "403 Forbidden"), (502, "502 Bad Gateway"),
        ]
    )
    func refusals(status: Int, line: String) async throws {
        let error = try await failure("status-\(status).hostile.test:443")
        #expect(error?.code == .unavailable, "\(String(describing: error))")
        #expect(error?.message.contains("HTTP/1.1 \(line)") == true, "\(String(describing: error))")
        #expect(error?.message.contains("status-\(status).hostile.test:443") == true)
        #expect((error?.cause as? TransportError)?.kind == .proxyFailed)
        if status == 407 {
            #expect(error?.message.contains("put user:password@ in the proxy URL") == true)
        }
    }

    @Test("an answer that is not HTTP fails with it shown escaped, never raw")
    func garbage() async throws {
        let error = try await failure("garbage.hostile.test:443")
        #expect(error?.code == .unavailable)
        #expect(
            error?.message.contains("not HTTP: 'SSH-2.0-OpenSSH_9.2 \\x1b[2J") == true,
            "\(String(describing: error))"
        )
        #expect(error?.message.unicodeScalars.contains { $0.value < 0x20 || $0.value >= 0x7F } == false)
    }

    @Test("an endless header and a flood of fields are cut at their bounds")
    func bounds() async throws {
        let endless = try await failure("endless-header.hostile.test:443")
        #expect(endless?.code == .unavailable)
        #expect(endless?.message.contains("more than 16384 bytes of header") == true, "\(String(describing: endless))")
        let many = try await failure("many-fields.hostile.test:443")
        #expect(many?.code == .unavailable)
        #expect(many?.message.contains("more than 100 header fields") == true, "\(String(describing: many))")
    }

    @Test("a proxy that trickles its answer fails at the connect timeout, not the call's deadline")
    func trickle() async throws {
        let started = ContinuousClock.now
        let error = try await failure("trickle.hostile.test:443", connectTimeout: .seconds(2))
        #expect(error?.code == .unavailable, "\(String(describing: error))")
        #expect(
            error?.message.contains("timed out waiting for the proxy's answer to CONNECT (received") == true,
            "\(String(describing: error))"
        )
        // One byte a second: what came in so far is shown.
        #expect(error?.message.contains("bytes: 'HT") == true, "\(String(describing: error))")
        // Reported, not asserted: the connect timeout is 2 s, the call's deadline 60 s.
        print("trickling proxy: the call failed after \(ContinuousClock.now - started)")
    }

    @Test("a proxy that closes in the middle of its answer fails, showing what it sent")
    func closeMidAnswer() async throws {
        let error = try await failure("close-mid-answer.hostile.test:443")
        #expect(error?.code == .unavailable)
        #expect(
            error?.message.contains(
                "closed the connection before answering CONNECT (received 17 bytes: 'HTTP/1.1 200 Conn')"
            )
                == true,
            "\(String(describing: error))"
        )
    }

    @Test("h2c through a tunnel whose first server bytes come with the proxy's answer; the proxy sees CONNECT only")
    func eagerTunnel() async throws {
        let faults = try await Peers.faultServer()
        let proxy = try await Peers.hostileProxy()
        let target = "eager.relay.test:\(faults.port("h2c"))"
        let channel = try await channel(target, proxyCredentials: "alice:s3cr%40t@")
        let response = try await FaultChannel.call(channel, "Echo", message: Array("through".utf8))
        #expect(response.message == Array("through".utf8))
        let seen = try proxy.requests().filter { $0["target"] as? String == target }
        #expect(seen.count == 1, "\(seen)")
        #expect(seen.first?["method"] as? String == "CONNECT")
        #expect(seen.first?["version"] as? String == "HTTP/1.1")
        let headers = seen.first?["headers"] as? [[String]] ?? []
        // Host and the proxy's own credentials (alice:s3cr@t, percent-decoded, RFC 7617), nothing else.
        #expect(headers == [["Host", target], ["Proxy-Authorization", "Basic YWxpY2U6czNjckB0"]], "\(headers)")
        #expect(seen.first?["extra_bytes"] as? Int == 0)
    }

    @Test("TLS runs end to end through the tunnel: the proxy never sees the bearer token")
    func tlsThroughTunnel() async throws {
        let sandbox = try await Peers.sandbox()
        let proxy = try await Peers.hostileProxy()
        let token = Peers.staticToken
        let target = "grpc.relay.test:\(sandbox.tlsPort)"
        let channel = try await channel(
            target,
            transportSecurity: .tls(
                TLSConfiguration(
                    trustRoots: .certificates(pem: sandbox.caCertificatePEM),
                    serverHostnameOverride: "localhost"
                )
            ),
            defaultCallOptions: CallOptions(credentials: .accessToken(token))
        )
        let client = Grpc_Testing_TestServiceClient(channel: channel)
        var request = Grpc_Testing_SimpleRequest()
        request.fillUsername = true
        let response = try await client.unaryCall(request)
        #expect(response.message.username == sandbox.user)
        #expect(try proxy.relayed("grpc.testing") == false)
        #expect(try proxy.relayed(token) == false)
        #expect(try proxy.relayed(String(token.prefix(16))) == false)
        let seen = try proxy.requests().filter { $0["target"] as? String == target }
        let names = (seen.first?["headers"] as? [[String]] ?? []).map { $0[0].lowercased() }
        #expect(names == ["host"], "\(names)")
    }

    @Test(
        "round-robin to a name through a proxy: one tunnel, since the proxy looks the name up; every call goes through it"
    )
    func roundRobinToANameIsOneTunnel() async throws {
        let faults = try await Peers.faultServer()
        let proxy = try await Peers.hostileProxy()
        let target = "round-robin.relay.test:\(faults.port("h2c"))"
        let channel = try await channel(target, loadBalancing: .roundRobin)
        for index in 0..<8 {
            let message = Array("call \(index)".utf8)
            #expect(try await FaultChannel.call(channel, "Echo", message: message).message == message)
        }
        let seen = try proxy.requests().filter { $0["target"] as? String == target }
        #expect(seen.map { $0["method"] as? String } == ["CONNECT"], "\(seen)")
        channel.close()
    }

    @Test(
        "an ipv4: list through a proxy: a CONNECT per address (round-robin at once, pick-first in turn), every refusal named",
        arguments: [(LoadBalancingPolicy.pickFirst, 11), (.roundRobin, 21)]
    )
    func addressListTunnels(policy: LoadBalancingPolicy, first: Int) async throws {
        // TEST-NET-1 addresses: only named in CONNECT lines; the proxy dials nothing but
        // loopback (it answers 502), so no packet goes to them.
        let targets = ["192.0.2.\(first):443", "192.0.2.\(first + 1):443"]
        let proxy = try await Peers.hostileProxy()
        let channel = try await channel("ipv4:" + targets.joined(separator: ","), loadBalancing: policy)
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(channel, "Echo", options: CallOptions(timeout: .seconds(60)))
        }
        #expect(error?.code == .unavailable, "\(String(describing: error))")
        #expect((error?.cause as? TransportError)?.kind == .proxyFailed, "\(String(describing: error))")
        if policy == .pickFirst {
            // One attempt tried both tunnels; its error names each refusal.
            for target in targets {
                #expect(
                    error?.message.contains("\(target): the proxy refused CONNECT: 'HTTP/1.1 502 Bad Gateway'") == true,
                    "\(String(describing: error))"
                )
            }
        }
        let connects = try proxy.requests().compactMap { $0["target"] as? String }.filter(targets.contains)
        #expect(Set(connects) == Set(targets), "\(connects)")
        channel.close()
    }
}
