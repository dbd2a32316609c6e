import AuthRPC
import Foundation
import TestSupport
import Testing

@Suite("Channel shutdown: the connections end before it returns")
struct ChannelShutdownTests {
    /// What the fault server recorded for `tag`, read (polling, bounded) on a channel of its own.
    static func serverEvents(
        _ tag: String,
        until done: ([[String: Any]]) -> Bool
    ) async throws -> [[String: Any]] {
        let observer = try await FaultChannel.make()
        let events = try await FaultChannel.events(observer, tag: tag, until: done)
        await observer.shutdown()
        return events
    }

    @Test("after a call, shutdown() returns with no connection left; the server saw GOAWAY (NO_ERROR) and the close")
    func endsTheConnection() async throws {
        let channel = try await FaultChannel.make()
        let tag = FaultChannel.newTag()
        try await FaultChannel.call(channel, "Echo", options: FaultChannel.tagged(tag))
        #expect(channel.openConnectionCount == 1)

        await channel.shutdown()
        #expect(channel.openConnectionCount == 0)
        #expect(channel.connectivityState == .shutdown)
        let after = await #expect(throws: RPCError.self) { try await FaultChannel.call(channel, "Echo") }
        #expect(after?.code == .unavailable)

        let events = try await Self.serverEvents(tag) { events in
            events.contains { $0["type"] as? String == "connection_closed" }
        }
        let goaway = events.first { $0["type"] as? String == "goaway" }
        #expect(goaway?["error_code"] as? Int == 0, "\(events)")
        #expect(events.contains { $0["type"] as? String == "connection_closed" }, "\(events)")
    }

    @Test("a call in flight when shutdown() is called finishes OK; shutdown() returns after it")
    func letsTheCallInFlightFinish() async throws {
        let channel = try await FaultChannel.make()
        let tag = FaultChannel.newTag()
        var options = FaultChannel.tagged(tag)
        options.initialMetadata.addString("500", forKey: "x-fault-delay-ms")
        let call = Task { try await FaultChannel.call(channel, "Echo", options: options) }
        // Shut down once the server has the call's headers: the call is then in flight.
        let events = try await Self.serverEvents(tag) { FaultChannel.sawRequest($0) }
        #expect(FaultChannel.sawRequest(events), "\(events)")

        await channel.shutdown()
        #expect(channel.openConnectionCount == 0)
        let response = try await call.value
        #expect(response.message == Array("hello".utf8))
    }

    @Test("cancelling the task in shutdown() closes at once: the call in flight fails UNAVAILABLE, no connection left")
    func cancelledShutdownCloses() async throws {
        let channel = try await FaultChannel.make()
        let tag = FaultChannel.newTag()
        // The server answers after 20 s; the call would wait for it.
        var options = FaultChannel.tagged(tag, CallOptions(timeout: .seconds(60)))
        options.initialMetadata.addString("20000", forKey: "x-fault-delay-ms")
        let call = Task { try await FaultChannel.call(channel, "Echo", options: options) }
        let events = try await Self.serverEvents(tag) { FaultChannel.sawRequest($0) }
        #expect(FaultChannel.sawRequest(events), "\(events)")

        let shutdown = Task { await channel.shutdown() }
        shutdown.cancel()
        await shutdown.value
        #expect(channel.openConnectionCount == 0)
        let failure = await #expect(throws: RPCError.self) { try await call.value }
        #expect(failure?.code == .unavailable, "\(String(describing: failure))")
    }

    @Test(
        "a connection attempt under way (a server that never sends SETTINGS, an hour's connect timeout) is abandoned",
        .timeLimit(.minutes(1))
    )
    func abandonsTheAttempt() async throws {
        let silent = SilentListener()
        var backoff = ConnectionBackoff.default
        backoff.minimumConnectTimeout = .seconds(3600)
        let channel = try Channel(
            target: "127.0.0.1:\(silent.port)",
            transportSecurity: .plaintext,
            connectionBackoff: backoff
        )
        var options = CallOptions(timeout: .milliseconds(200))
        options.waitForReady = true
        let failure = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(channel, "Echo", options: options)
        }
        #expect(failure?.code == .deadlineExceeded)
        #expect(channel.openConnectionCount == 1)

        await channel.shutdown()
        #expect(channel.openConnectionCount == 0)
    }

    @Test("shutdown() of a channel that never connected, and a second shutdown(), return at once")
    func idleAndRepeated() async throws {
        let channel = try Channel(target: "127.0.0.1:\(Ports.closed())", transportSecurity: .plaintext)
        await channel.shutdown()
        await channel.shutdown()
        #expect(channel.openConnectionCount == 0)
        #expect(channel.connectivityState == .shutdown)
    }
}
