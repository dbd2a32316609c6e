import AuthRPC
import AuthSampleService
import Foundation
import TestSupport

/// Backends of one service on 127.0.0.1, 127.0.0.2, 127.0.0.3, ... at one port, as a Kubernetes
/// service's endpoints are several addresses: real grpcio servers (Tests/Peers/backend_server.py),
/// each recording the ids of the calls it runs in a file of its own.
struct Backends: Sendable {
    let port: Int
    /// Backend `i` listens on 127.0.0.(i + 1); a restarted one replaces its entry.
    private(set) var running: [BackendInfo]
    /// Every incarnation ever started, killed ones included.
    private(set) var all: [BackendInfo]

    /// Starts `count` backends named `b1`, `b2`, ... on one free port.
    static func launch(count: Int) async throws -> Backends {
        var lastError: (any Error)?
        for _ in 0..<5 {
            let port = Ports.closed()
            do {
                var running: [BackendInfo] = []
                for index in 0..<count {
                    running.append(try await Peers.launchBackend(listen: address(index, port), name: "b\(index + 1)"))
                }
                return Backends(port: port, running: running, all: running)
            } catch {
                // Another process took the port on one of the addresses: another port.
                lastError = error
            }
        }
        throw lastError!
    }

    static func address(_ index: Int, _ port: Int) -> String { "127.0.0.\(index + 1):\(port)" }

    /// `ipv4:127.0.0.1:PORT,127.0.0.2:PORT,...`
    var ipv4Target: String {
        "ipv4:" + running.indices.map { Self.address($0, port) }.joined(separator: ",")
    }

    /// Kills backend `index` (SIGKILL, as a crash).
    func kill(_ index: Int) {
        running[index].process.kill()
    }

    /// Starts backend `index` again, on the same address and port, with a new ids file.
    mutating func restart(_ index: Int, name: String) async throws {
        let backend = try await Peers.launchBackend(listen: Self.address(index, port), name: name)
        running[index] = backend
        all.append(backend)
    }

    /// Stops every running backend (``PeerProcess/stop()`` returns without waiting for the exit).
    func stop() {
        for backend in running { backend.process.stop() }
    }

    /// Every call id any incarnation ran, with how many times.
    var ranCounts: [String: Int] {
        var counts: [String: Int] = [:]
        for backend in all {
            for id in backend.ranIDs { counts[id, default: 0] += 1 }
        }
        return counts
    }
}

/// grpc.testing.TestService/UnaryCall with an `x-call-id` (and optionally a server-side delay).
enum BackendCall {
    static func call(
        _ channel: Channel,
        id: String,
        delayMillis: Int = 0,
        timeout: Duration = .seconds(20),
        waitForReady: Bool = false
    ) async throws(RPCError) -> String {
        var options = CallOptions(timeout: timeout, waitForReady: waitForReady)
        options.initialMetadata.addString(id, forKey: "x-call-id")
        if delayMillis > 0 { options.initialMetadata.addString(String(delayMillis), forKey: "x-delay-ms") }
        return try await Grpc_Testing_TestServiceClient(channel: channel)
            .unaryCall(Grpc_Testing_SimpleRequest(), options: options).message.username
    }
}

extension BackendInfo {
    /// Stops the backend, as ``Backends/stop()`` does.
    func stop() {
        process.stop()
    }
}
