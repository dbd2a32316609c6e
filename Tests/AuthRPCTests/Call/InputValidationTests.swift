import AuthRPC
import Foundation
import TestSupport
import Testing

/// Caller inputs that become headers or arithmetic are checked before anything is sent: a bad
/// one is `invalidArgument` saying what is wrong (and the server never sees the call), an
/// extreme but meaningful one works, and none of them traps.
@Suite("Call and channel inputs")
struct InputValidationTests {
    /// Makes a tagged call with `change` applied to its options; returns the error and whether
    /// the server saw anything for the tag.
    private func refused(_ change: (inout CallOptions) -> Void) async throws -> (error: RPCError?, reachedServer: Bool)
    {
        let channel = try await FaultChannel.make()
        let tag = FaultChannel.newTag()
        var options = FaultChannel.tagged(tag)
        change(&options)
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(channel, "Echo", options: options)
        }
        let events = try await FaultChannel.events(channel, tag: tag)
        return (error, !events.isEmpty)
    }

    @Test(
        "a bad user agent prefix is refused before anything is sent",
        arguments: [
            "", " leading", "trailing ", "app\r\nx-injected: 1", "tab\there", "caf\u{E9}", "del\u{7F}", "nul\u{0}",
        ]
    )
    func badUserAgent(prefix: String) async throws {
        let (error, reachedServer) = try await refused { $0.userAgentPrefix = prefix }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.hasPrefix("invalid userAgentPrefix: ") == true, "\(String(describing: error))")
        #expect(
            error?.message.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F } == true,
            "the message stays printable"
        )
        #expect(!reachedServer)
    }

    @Test(
        "a bad authority is refused before anything is sent",
        arguments: [
            "", "a b", "host\r\nx-injected: 1", "user@host", "host:99999", "host:", "host:port", "host:1:2",
            "[::1", "[zz]:1", "[::1]x", "a/b", "h%zz", "\u{0}", "h\u{E9}",
        ]
    )
    func badAuthority(authority: String) async throws {
        let (error, reachedServer) = try await refused { $0.authority = authority }
        #expect(error?.code == .invalidArgument)
        #expect(
            error?.message.hasPrefix("invalid authority (expected host[:port]): ") == true,
            "\(String(describing: error))"
        )
        #expect(
            error?.message.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F } == true,
            "the message stays printable"
        )
        #expect(!reachedServer)
    }

    @Test(
        "good authorities go out as given",
        arguments: ["example.com", "example.com:8443", "[::1]:443", "[2001:db8::1]", "10.1.2.3:80", "a_b.c-d~e"]
    )
    func goodAuthority(authority: String) async throws {
        let channel = try await FaultChannel.make()
        var options = CallOptions()
        options.authority = authority
        #expect(try await FaultChannel.echoRequest(channel, options: options).values(":authority") == [authority])
    }

    @Test("a negative response size limit is refused before anything is sent", arguments: [-1, Int.min])
    func negativeMessageLimit(limit: Int) async throws {
        let (error, reachedServer) = try await refused { $0.maxResponseMessageBytes = limit }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("maxResponseMessageBytes") == true)
        #expect(!reachedServer)
    }

    @Test("Int.max as the response size limit works (no overflow adding the prefix)")
    func unlimitedMessages() async throws {
        let channel = try await FaultChannel.make()
        var options = CallOptions()
        options.maxResponseMessageBytes = .max
        #expect(try await FaultChannel.call(channel, "Echo", options: options).message == Array("hello".utf8))
    }

    @Test(
        "timeouts past what grpc-timeout can carry count as its maximum, through the exchange and a token provider's wait",
        arguments: [Duration.seconds(Int64.max), .seconds(1e20), .seconds(99_999_999 * 3600 + 1)]
    )
    func hugeTimeouts(timeout: Duration) async throws {
        let channel = try await FaultChannel.make()
        var options = CallOptions(timeout: timeout)
        #expect(try await FaultChannel.echoRequest(channel, options: options).values("grpc-timeout") == ["99999999H"])
        // A provider without a cached token is awaited under the deadline (a sleep until it).
        options.credentials = .provider(ScriptedProvider(.answer("token-1")))
        options.allowsInsecureCredentials = true
        #expect(
            try await FaultChannel.echoRequest(channel, options: options).values("authorization") == ["Bearer token-1"]
        )
    }

    @Test(
        "keepalive intervals must be longer than zero; a very long one works",
        arguments: [
            (Duration.zero, Duration.seconds(1)), (.seconds(1), .zero), (.seconds(-1), .seconds(1)),
        ]
    )
    func badKeepalive(interval: Duration, timeout: Duration) {
        let error = #expect(throws: RPCError.self) {
            try Channel(
                target: "127.0.0.1:1",
                transportSecurity: .plaintext,
                keepalive: Keepalive(interval: interval, timeout: timeout)
            )
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("keepalive") == true)
    }

    @Test("a keepalive interval of Int64.max seconds neither traps nor fires")
    func longKeepalive() async throws {
        let faults = try await Peers.faultServer()
        let channel = try Channel(
            target: "\(faults.host):\(faults.port("h2c"))",
            transportSecurity: .plaintext,
            keepalive: Keepalive(interval: .seconds(Int64.max), timeout: .seconds(1e20)),
            connectionBackoff: .patient
        )
        var options = CallOptions()
        options.initialMetadata.addString("200", forKey: "x-fault-delay-ms")
        #expect(try await FaultChannel.call(channel, "Echo", options: options).message == Array("hello".utf8))
    }

    @Test(
        "a server name override that is not a host is refused when the channel is made",
        arguments: ["", "bad host", "host\r\nx: 1", "user@host", "host:443"]
    )
    func badServerNameOverride(name: String) {
        let error = #expect(throws: RPCError.self) {
            try Channel(target: "127.0.0.1:1", transportSecurity: .tls(TLSConfiguration(serverHostnameOverride: name)))
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("serverHostnameOverride") == true)
    }

    @Test(
        "targets with control characters or userinfo are refused, and the message stays printable",
        arguments: ["a\u{0}b:443", "user@host:1", "ho\u{7}st", "h%zz:1"]
    )
    func badTargets(target: String) {
        let error = #expect(throws: RPCError.self) { try Channel(target: target, transportSecurity: .plaintext) }
        #expect(error?.code == .invalidArgument)
        #expect(
            error?.message.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F } == true,
            "\(String(describing: error))"
        )
    }
}
