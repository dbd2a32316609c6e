import AuthRPC
import Foundation
import Testing
import TestSupport

@Suite("Channel connection management")
struct ChannelLifecycleTests {
    @Test("a refused port fails UNAVAILABLE naming the cause; later calls fail fast during the backoff, without a new attempt")
    func refusedThenBackoff() async throws {
        let logs = LogCapture()
        let port = Ports.closed()
        let channel = try Channel(target: "127.0.0.1:\(port)", transportSecurity: .plaintext, logger: logs.logger())
        let first = await #expect(throws: RPCError.self) { try await FaultChannel.call(channel, "Echo") }
        #expect(first?.code == .unavailable)
        #expect(first?.message.contains("connection refused") == true, "\(String(describing: first))")
        #expect((first?.cause as? TransportError)?.kind == .connectionRefused)
        let second = await #expect(throws: RPCError.self) { try await FaultChannel.call(channel, "Echo") }
        #expect(second?.code == .unavailable)
        #expect(second?.message == first?.message)
        #expect(logs.count("connecting") == 1, "\(logs.all)")
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
        let channel = try Channel(target: "\(faults.host):\(faults.port("h2c"))", transportSecurity: .plaintext, logger: logs.logger())
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<50 { group.addTask { try await FaultChannel.call(channel, "Echo") } }
            try await group.waitForAll()
        }
        #expect(logs.count("connecting") == 1, "\(logs.all)")
    }

    @Test("keepalive: a server that stops answering PINGs fails the waiting call UNAVAILABLE")
    func keepalive() async throws {
        let faults = try await Peers.faultServer()
        let channel = try Channel(target: "\(faults.host):\(faults.port("h2c_no_ping_ack"))", transportSecurity: .plaintext,
                                  keepalive: Keepalive(interval: .milliseconds(100), timeout: .milliseconds(300)))
        let error = await #expect(throws: RPCError.self) { try await FaultChannel.call(channel, "Hang") }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("keepalive") == true)
        #expect((error?.cause as? TransportError)?.kind == .keepaliveTimeout)
    }

    @Test("unusable TLS material is refused when the channel is made")
    func badTLSMaterial() {
        #expect {
            try Channel(target: "localhost:1", transportSecurity: .tls(TLSConfiguration(trustRoots: .certificates(pem: "garbage"))))
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
        let channel = try Channel(target: "\(faults.host):\(faults.port("h2c"))", transportSecurity: .plaintext,
                                  defaultCallOptions: CallOptions(credentials: .accessToken(secret), allowsInsecureCredentials: true),
                                  logger: logs.logger())
        _ = try await FaultChannel.call(channel, "Echo")
        _ = try? await FaultChannel.call(channel, "TrailersOnly")
        #expect(!logs.all.isEmpty)
        #expect(!logs.all.contains { $0.contains(secret) })
    }
}
