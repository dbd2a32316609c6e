import AuthRPC
import Foundation
import TestSupport
import Testing

/// Against real grpcio backends on 127.0.0.1, 127.0.0.2 and 127.0.0.3, which count the calls
/// they run (the evidence is theirs, not the client's).
@Suite("Load balancing over several backends", .serialized)
struct LoadBalancingTests {
    private static var quickBackoff: ConnectionBackoff {
        var backoff = ConnectionBackoff.default
        backoff.initial = .milliseconds(100)
        backoff.maximum = .milliseconds(500)
        return backoff
    }

    @Test(
        "round-robin with 50 calls in flight, a backend killed and restarted: only its calls in flight fail, no call runs twice, traffic spreads again when it is back"
    )
    func roundRobinKillAndRestart() async throws {
        var backends = try await Backends.launch(count: 3)
        defer { backends.stop() }
        let channel = try Channel(
            target: backends.ipv4Target,
            transportSecurity: .plaintext,
            connectionBackoff: Self.quickBackoff,
            loadBalancing: .roundRobin
        )
        defer { channel.close() }
        let load = CallLoad(channel, prefix: "rr")
        let driver = Task { await load.run(concurrency: 50, delayMillis: 50) }

        try await eventually("every backend runs calls") { backends.running.allSatisfy { $0.ranIDs.count >= 50 } }
        let killed = ContinuousClock.now
        backends.kill(1)
        try await eventually("the other two carry the load") { load.successes(startedAfter: killed) >= 300 }
        let restarting = ContinuousClock.now
        try await backends.restart(1, name: "b2-again")
        let restarted = backends.running[1]
        try await eventually("the restarted backend takes calls again") { restarted.ranIDs.count >= 50 }
        load.stop()
        await driver.value

        let ran = backends.ranCounts
        let twice = ran.filter { $0.value > 1 }
        #expect(twice.isEmpty, "calls that ran twice: \(twice.keys.sorted().prefix(10))")
        let outcomes = load.outcomes
        let ranOnKilled = Set(backends.all[1].ranIDs)
        let failures = outcomes.filter { $0.code != nil }
        for failure in failures {
            #expect(failure.code == .unavailable, "\(failure)")
            // In flight on the killed backend: it ran there or nowhere, and ended after the kill,
            // before the backend was back.
            #expect(ran[failure.id] == nil || ranOnKilled.contains(failure.id), "\(failure)")
            #expect(failure.ended >= killed && failure.started < restarting, "\(failure)")
        }
        #expect(failures.count <= 50, "\(failures.count) calls failed")
        for success in outcomes where success.code == nil {
            #expect(ran[success.id] == 1, "\(success.id) succeeded but ran \(ran[success.id] ?? 0) times")
        }
        #expect(backends.running[0].ranIDs.count >= 50 && backends.running[2].ranIDs.count >= 50)
    }

    @Test("pick-first: one connection, to the first address that answers, takes every call")
    func pickFirst() async throws {
        let backends = try await Backends.launch(count: 3)
        defer { backends.stop() }
        let refusedPort = Ports.closed()
        // The first address refuses: pick-first goes on to the next, and stays there.
        let channel = try Channel(
            target: "ipv4:127.0.0.1:\(refusedPort),127.0.0.2:\(backends.port),127.0.0.3:\(backends.port)",
            transportSecurity: .plaintext
        )
        defer { channel.close() }
        try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<60 { group.addTask { try await BackendCall.call(channel, id: "pf-\(index)") } }
            for try await server in group { #expect(server == "b2") }
        }
        #expect(backends.running[1].ranIDs.count == 60)
        #expect(backends.running[0].ranIDs.isEmpty && backends.running[2].ranIDs.isEmpty)
    }
}
