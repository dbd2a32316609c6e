import AuthRPC
import AuthRPCSystem
import Foundation
import TestSupport
import Testing

/// Every state a channel reports, in order, collected as they come.
private final class StateLog: Sendable {
    private let states = Locked<[ConnectivityState]>([])
    private let task: Task<Void, Never>

    init(_ channel: Channel) {
        let sequence = channel.connectivityStates
        let states = self.states
        task = Task {
            for await state in sequence { states.withLock { $0.append(state) } }
        }
    }

    var all: [ConnectivityState] { states.withLock { $0 } }
    var last: ConnectivityState? { all.last }

    /// Waits for the sequence to end (after SHUTDOWN).
    func finished() async { await task.value }
}

private var quickBackoff: ConnectionBackoff {
    var backoff = ConnectionBackoff.default
    backoff.initial = .milliseconds(100)
    backoff.maximum = .milliseconds(200)
    backoff.jitter = 0
    return backoff
}

@Suite("Connectivity states, idle timeout and waitForReady", .serialized)
struct ConnectivityTests {
    @Test(
        "the states of a channel whose backend is killed and restarted: IDLE, CONNECTING, READY, IDLE, CONNECTING, TRANSIENT_FAILURE, ..., READY, SHUTDOWN"
    )
    func stateSequence() async throws {
        var backends = try await Backends.launch(count: 1)
        defer { backends.stop() }
        let channel = try Channel(
            target: "127.0.0.1:\(backends.port)",
            transportSecurity: .plaintext,
            connectionBackoff: quickBackoff
        )
        #expect(channel.connectivityState == .idle)
        let log = StateLog(channel)
        #expect(try await BackendCall.call(channel, id: "s-1") == "b1")
        #expect(channel.connectivityState == .ready)

        backends.kill(0)
        // Pick-first: the connection is gone, so is the channel's reason to connect.
        try await eventually("the channel notices") { log.last == .idle }
        let refused = await #expect(throws: RPCError.self) { try await BackendCall.call(channel, id: "s-2") }
        #expect(refused?.code == .unavailable)
        try await eventually("the channel reports the failure") { log.all.contains(.transientFailure) }

        try await backends.restart(0, name: "b1-again")
        #expect(try await BackendCall.call(channel, id: "s-3", waitForReady: true) == "b1-again")
        channel.close()
        await log.finished()

        let states = log.all
        #expect(
            Array(states.prefix(6)) == [.idle, .connecting, .ready, .idle, .connecting, .transientFailure],
            "\(states)"
        )
        #expect(Array(states.suffix(3)) == [.connecting, .ready, .shutdown], "\(states)")
        // Between them, the channel tries again after each backoff: CONNECTING, TRANSIENT_FAILURE.
        let middle = states.dropFirst(6).dropLast(3)
        #expect(middle.allSatisfy { $0 == .connecting || $0 == .transientFailure }, "\(states)")
        #expect(zip(states, states.dropFirst()).allSatisfy { $0 != $1 }, "a state reported twice in a row: \(states)")
        // A sequence made after shutdown has that one state.
        var late: [ConnectivityState] = []
        for await state in channel.connectivityStates { late.append(state) }
        #expect(late == [.shutdown])
    }

    @Test(
        "idle timeout: an unused connection sends GOAWAY and closes, the channel becomes IDLE, and the next call connects again"
    )
    func idleTimeout() async throws {
        let faults = try await Peers.faultServer()
        let channel = try Channel(
            target: "\(faults.host):\(faults.port("h2c"))",
            transportSecurity: .plaintext,
            idleTimeout: .milliseconds(300)
        )
        defer { channel.close() }
        let log = StateLog(channel)
        let tag = "idle-\(UUID().uuidString)"
        _ = try await FaultChannel.call(channel, "Echo", options: FaultChannel.tagged(tag))
        // Waits for IDLE after READY (not for a count), so an unexpected sequence fails below
        // showing itself rather than as a timeout. On a busy machine the new connection can idle
        // out (300 ms) before the call's stream reaches it: the stream is refused unsent, the
        // call goes out on a new connection, and the sequence holds one more CONNECTING, READY.
        try await eventually("the channel goes idle", within: .seconds(30)) {
            let states = log.all
            return states.contains(.ready) && states.last == .idle
        }
        let idle = log.all
        #expect(Array(idle.prefix(3)) == [.idle, .connecting, .ready], "\(idle)")
        #expect(Array(idle.suffix(2)) == [.ready, .idle], "\(idle)")
        #expect(!idle.contains(.transientFailure), "\(idle)")

        // The server saw the client's GOAWAY (NO_ERROR) and the connection end.
        let observer = try await FaultChannel.make()
        defer { observer.close() }
        let events = try await FaultChannel.events(observer, tag: tag) { events in
            events.contains { $0["type"] as? String == "connection_closed" }
        }
        #expect(
            events.contains { $0["type"] as? String == "goaway" && $0["error_code"] as? Int == 0 },
            "\(events)"
        )
        #expect(events.contains { $0["type"] as? String == "connection_closed" }, "\(events)")

        let mark = log.all.count
        #expect(try await FaultChannel.call(channel, "Echo").message == Array("hello".utf8))
        try await eventually("the channel reports it is back") { log.all.count >= mark + 2 }
        #expect(Array(log.all[mark..<(mark + 2)]) == [.connecting, .ready], "\(log.all)")
    }

    @Test("the idle timeout counts from the last call's end: a call longer than it keeps its connection")
    func idleCountsFromTheLastCall() async throws {
        let faults = try await Peers.faultServer()
        let channel = try Channel(
            target: "\(faults.host):\(faults.port("h2c"))",
            transportSecurity: .plaintext,
            idleTimeout: .milliseconds(200)
        )
        defer { channel.close() }
        let log = StateLog(channel)
        let tag = FaultChannel.newTag()
        var options = FaultChannel.tagged(tag)
        options.initialMetadata.addString("5000", forKey: "x-fault-delay-ms")
        let long = Task { try await FaultChannel.call(channel, "Echo", options: options) }
        // Once the server has the long call (it answers 5 s later, so it is still open below
        // however late a loaded machine runs this), and past the idle timeout: a second call
        // finds the connection taking streams (had it begun to close for idleness, this call
        // would make a new one).
        _ = try await FaultChannel.events(channel, tag: tag) { $0.contains { $0["type"] as? String == "end_stream" } }
        try await Task.sleep(for: .milliseconds(500))
        _ = try await FaultChannel.call(channel, "Echo")
        #expect(try await long.value.message == Array("hello".utf8))
        try await eventually("the channel goes idle after the calls", within: .seconds(30)) { log.all.count == 4 }
        #expect(log.all == [.idle, .connecting, .ready, .idle], "\(log.all)")
    }

    @Test("a call waits while the channel connects; without waitForReady it fails at once in transient failure")
    func failFast() async throws {
        let port = Ports.closed()
        var backoff = quickBackoff
        backoff.initial = .seconds(600)
        backoff.maximum = .seconds(600)
        let channel = try Channel(
            target: "127.0.0.1:\(port)",
            transportSecurity: .plaintext,
            connectionBackoff: backoff
        )
        defer { channel.close() }
        let first = await #expect(throws: RPCError.self) { try await BackendCall.call(channel, id: "f-1") }
        #expect(first?.code == .unavailable && first?.message.contains("connection refused") == true)
        #expect(channel.connectivityState == .transientFailure)
        let fast = await #expect(throws: RPCError.self) { try await BackendCall.call(channel, id: "f-2") }
        #expect(fast?.code == .unavailable && fast?.message == first?.message)

        // With waitForReady the call waits through the backoff, until its deadline, naming why.
        let waited = await #expect(throws: RPCError.self) {
            try await BackendCall.call(channel, id: "f-3", timeout: .milliseconds(300), waitForReady: true)
        }
        #expect(waited?.code == .deadlineExceeded)
        #expect(waited?.message.contains("connection refused") == true, "\(String(describing: waited))")

        // Or until it is cancelled.
        let cancelled = Task { try await BackendCall.call(channel, id: "f-4", waitForReady: true) }
        try await Task.sleep(for: .milliseconds(100))
        cancelled.cancel()
        let error = await #expect(throws: RPCError.self) { try await cancelled.value }
        #expect(error?.code == .cancelled)
    }

    @Test("waitForReady waits through a refused port that starts listening later")
    func waitForReadyThroughRefusedPort() async throws {
        let port = Ports.closed()
        let channel = try Channel(
            target: "127.0.0.1:\(port)",
            transportSecurity: .plaintext,
            connectionBackoff: quickBackoff
        )
        defer { channel.close() }
        let refused = await #expect(throws: RPCError.self) { try await BackendCall.call(channel, id: "w-0") }
        #expect(refused?.code == .unavailable)
        let waiting = Task { try await BackendCall.call(channel, id: "w-1", timeout: .seconds(60), waitForReady: true) }
        // The call is still waiting after several backoffs.
        try await Task.sleep(for: .milliseconds(500))
        let backend = try await Peers.launchBackend(listen: "127.0.0.1:\(port)", name: "late")
        defer { backend.stop() }
        #expect(try await waiting.value == "late")
        #expect(backend.ranIDs == ["w-1"])
        #expect(channel.connectivityState == .ready)
    }

    @Test("the idle timeout must be longer than zero")
    func badIdleTimeout() {
        let error = #expect(throws: RPCError.self) {
            try Channel(target: "localhost:1", transportSecurity: .plaintext, idleTimeout: .zero)
        }
        #expect(error?.code == .invalidArgument && error?.message.contains("idleTimeout") == true)
    }
}

@Suite("Unix-domain sockets")
struct UnixSocketTests {
    @Test("unix:path, unix:///absolute/path and unix-abstract:name reach a grpcio server listening there")
    func calls() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "authrpc-unix-\(UUID().uuidString)"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("backend.sock").path
        let file = try await Peers.launchBackend(listen: "unix:\(path)", name: "unix")
        defer { file.stop() }
        for target in ["unix:\(path)", "unix://\(path)"] {
            let channel = try Channel(target: target, transportSecurity: .plaintext)
            defer { channel.close() }
            #expect(try await BackendCall.call(channel, id: "u-\(target.count)") == "unix")
        }
        #expect(file.ranIDs.count == 2)

        #if os(Linux)
        let name = "authrpc-test-\(UUID().uuidString)"
        let abstract = try await Peers.launchBackend(listen: "unix-abstract:\(name)", name: "abstract")
        defer { abstract.stop() }
        let channel = try Channel(target: "unix-abstract:\(name)", transportSecurity: .plaintext)
        defer { channel.close() }
        #expect(try await BackendCall.call(channel, id: "a-1") == "abstract")
        #expect(abstract.ranIDs == ["a-1"])
        #endif
    }

    @Test("a socket nobody listens on fails UNAVAILABLE as refused, naming the path")
    func missing() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "authrpc-none-\(UUID().uuidString).sock"
        ).path
        let channel = try Channel(target: "unix:\(path)", transportSecurity: .plaintext)
        defer { channel.close() }
        let error = await #expect(throws: RPCError.self) { try await BackendCall.call(channel, id: "m-1") }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains(path) == true, "\(String(describing: error))")
        #expect((error?.cause as? TransportError)?.kind == .connectionRefused)
    }
}
