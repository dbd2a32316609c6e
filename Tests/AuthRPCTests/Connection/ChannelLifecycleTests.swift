import AuthRPC
import Foundation
import TestSupport
import Testing

@Suite("Channel connection management")
struct ChannelLifecycleTests {
    @Test(
        "a refused port fails UNAVAILABLE naming the cause; later calls fail fast during the backoff, without a new attempt"
    )
    func refusedThenBackoff() async throws {
        let logs = LogCapture()
        let port = Ports.closed()
        // A backoff far longer than the test, so a slow machine cannot reach the next attempt.
        var backoff = ConnectionBackoff.default
        backoff.initial = .seconds(600)
        backoff.maximum = .seconds(600)
        let channel = try Channel(
            target: "127.0.0.1:\(port)",
            transportSecurity: .plaintext,
            connectionBackoff: backoff,
            logger: logs.logger()
        )
        let first = await #expect(throws: RPCError.self) { try await FaultChannel.call(channel, "Echo") }
        #expect(first?.code == .unavailable)
        #expect(first?.message.contains("connection refused") == true, "\(String(describing: first))")
        #expect((first?.cause as? TransportError)?.kind == .connectionRefused)
        let second = await #expect(throws: RPCError.self) { try await FaultChannel.call(channel, "Echo") }
        #expect(second?.code == .unavailable)
        #expect(second?.message == first?.message)
        #expect(logs.count("connecting") == 1, "\(logs.all)")
    }

    @Test("after each backoff the channel tries again by itself, with no call asking; the same policy simply connects")
    func backoffThenReconnect() async throws {
        let logs = LogCapture()
        let faults = try await Peers.faultServer()
        let port = Ports.closed()
        var backoff = ConnectionBackoff.default
        backoff.initial = .milliseconds(50)
        backoff.maximum = .milliseconds(50)
        backoff.jitter = 0
        let refused = try Channel(
            target: "127.0.0.1:\(port)",
            transportSecurity: .plaintext,
            connectionBackoff: backoff,
            logger: logs.logger()
        )
        defer { refused.close() }
        await #expect(throws: RPCError.self) { try await FaultChannel.call(refused, "Echo") }
        // Bounded: 50 ms backoffs, up to 10 s on a loaded machine.
        for _ in 0..<200 where logs.count("connecting") < 3 {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(logs.count("connecting") >= 3, "\(logs.all)")
        #expect([.transientFailure, .connecting].contains(refused.connectivityState))
        // The same policy on a reachable server: the first attempt simply connects.
        let reachable = try Channel(
            target: "\(faults.host):\(faults.port("h2c"))",
            transportSecurity: .plaintext,
            connectionBackoff: backoff
        )
        _ = try await FaultChannel.call(reachable, "Echo")
    }

    @Test(
        "a connection backoff that cannot work is refused when the channel is made",
        arguments: [
            (
                "initial",
                ConnectionBackoff(
                    initial: .zero,
                    multiplier: 1.6,
                    jitter: 0.2,
                    maximum: .seconds(1),
                    minimumConnectTimeout: .seconds(1)
                )
            ),
            (
                "initial",
                ConnectionBackoff(
                    initial: .seconds(5),
                    multiplier: 1.6,
                    jitter: 0.2,
                    maximum: .seconds(1),
                    minimumConnectTimeout: .seconds(1)
                )
            ),
            (
                "multiplier",
                ConnectionBackoff(
                    initial: .seconds(1),
                    multiplier: .nan,
                    jitter: 0.2,
                    maximum: .seconds(1),
                    minimumConnectTimeout: .seconds(1)
                )
            ),
            (
                "multiplier",
                ConnectionBackoff(
                    initial: .seconds(1),
                    multiplier: 0.5,
                    jitter: 0.2,
                    maximum: .seconds(1),
                    minimumConnectTimeout: .seconds(1)
                )
            ),
            (
                "jitter",
                ConnectionBackoff(
                    initial: .seconds(1),
                    multiplier: 1.6,
                    jitter: 1.5,
                    maximum: .seconds(1),
                    minimumConnectTimeout: .seconds(1)
                )
            ),
            (
                "minimumConnectTimeout",
                ConnectionBackoff(
                    initial: .seconds(1),
                    multiplier: 1.6,
                    jitter: 0.2,
                    maximum: .seconds(1),
                    minimumConnectTimeout: .seconds(-1)
                )
            ),
        ]
    )
    func badBackoff(field: String, backoff: ConnectionBackoff) {
        #expect {
            try Channel(target: "localhost:1", transportSecurity: .plaintext, connectionBackoff: backoff)
        } throws: { error in
            let error = error as! RPCError
            return error.code == .invalidArgument && error.message.contains("connectionBackoff")
                && error.message.contains(field)
        }
    }

    @Test("an unknown host fails UNAVAILABLE, naming the host")
    func unknownHost() async throws {
        let channel = try Channel(target: "no-such-host.invalid:443", transportSecurity: .plaintext)
        let error = await #expect(throws: RPCError.self) { try await FaultChannel.call(channel, "Echo") }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("no-such-host.invalid") == true)
        #expect((error?.cause as? TransportError)?.kind == .hostNotFound)
    }

    @Test("many concurrent first calls share one connection attempt")
    func sharedConnect() async throws {
        let logs = LogCapture()
        let faults = try await Peers.faultServer()
        let channel = try Channel(
            target: "\(faults.host):\(faults.port("h2c"))",
            transportSecurity: .plaintext,
            logger: logs.logger()
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<50 { group.addTask { try await FaultChannel.call(channel, "Echo") } }
            try await group.waitForAll()
        }
        #expect(logs.count("connecting") == 1, "\(logs.all)")
    }

    @Test("keepalive: a server that stops answering PINGs fails the waiting call UNAVAILABLE")
    func keepalive() async throws {
        let faults = try await Peers.faultServer()
        let channel = try Channel(
            target: "\(faults.host):\(faults.port("h2c_no_ping_ack"))",
            transportSecurity: .plaintext,
            keepalive: Keepalive(interval: .milliseconds(100), timeout: .milliseconds(300))
        )
        let error = await #expect(throws: RPCError.self) { try await FaultChannel.call(channel, "Hang") }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("keepalive") == true)
        #expect((error?.cause as? TransportError)?.kind == .keepaliveTimeout)
    }

    @Test("unusable TLS material is refused when the channel is made")
    func badTLSMaterial() {
        #expect {
            try Channel(
                target: "localhost:1",
                transportSecurity: .tls(TLSConfiguration(trustRoots: .certificates(pem: "garbage")))
            )
        } throws: { error in
            let error = error as! RPCError
            return error.code == .invalidArgument && (error.cause as? TransportError)?.kind == .invalidTLSConfiguration
        }
    }

    @Test("connection events are logged; credentials never are")
    func noSecretsLogged() async throws {
        let logs = LogCapture()
        let faults = try await Peers.faultServer()
        let secret = "super-secret-token-\(UUID().uuidString)"
        let channel = try Channel(
            target: "\(faults.host):\(faults.port("h2c"))",
            transportSecurity: .plaintext,
            defaultCallOptions: CallOptions(credentials: .accessToken(secret), allowsInsecureCredentials: true),
            logger: logs.logger()
        )
        _ = try await FaultChannel.call(channel, "Echo")
        _ = try? await FaultChannel.call(channel, "TrailersOnly")
        #expect(!logs.all.isEmpty)
        #expect(!logs.all.contains { $0.contains(secret) })
    }
}
