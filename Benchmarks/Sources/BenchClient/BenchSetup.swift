import AuthRPC
import AuthSampleService
import Foundation

/// What every implementation is given: where the server is and what to send.
struct BenchSetup: Sendable {
    var tls: Bool
    var port: Int
    /// Several servers' ports (127.0.0.1 each) for swift-authrpc's round-robin; empty: `port` alone.
    var ports: [Int] = []
    /// swift-authrpc's load-balancing policy: `pick_first` or `round_robin`.
    var loadBalancing = "pick_first"
    /// swift-authrpc's channel target when given (`xds:///NAME`), instead of `port` or `ports`.
    var target: String?
    var caPath: String
    var requestBytes: Int
    var responseBytes: Int

    /// The request: `requestBytes` bytes out, `responseBytes` bytes asked back.
    func makeRequest() -> Grpc_Testing_SimpleRequest {
        var request = Grpc_Testing_SimpleRequest()
        request.responseSize = Int32(responseBytes)
        request.payload.body = Data(count: requestBytes)
        return request
    }

    /// Large enough for the 4 MiB messages and their framing.
    static let maxMessageBytes = 64 << 20

    /// A bearer token, sent on every call as a real client would.
    static let token = "bench-token-0123456789abcdef0123456789abcdef"

    /// Request metadata the C++ bench server understands (see Benchmarks/CxxServer).
    static let holdKey = "x-bench-hold"
    static let controlKey = "x-bench-control"
    /// The policy of `authrpc-retry`: gRFC A6's example (4 attempts, 0.1 s to 1 s, ×2, UNAVAILABLE);
    /// its calls succeed at once, so it measures what a policy costs a call that needs no retry.
    static let retryPolicy = RetryPolicy(
        maxAttempts: 4,
        initialBackoff: .milliseconds(100),
        maxBackoff: .seconds(1),
        backoffMultiplier: 2
    )
}

/// One implementation's unary call.
protocol UnaryCaller: Sendable {
    /// Makes one call with the prebuilt request and options; throws on any non-OK outcome.
    /// Runs on the caller's executor (no hop in or out), for every implementation alike.
    nonisolated(nonsending) func call() async throws
    /// Makes one call the server parks until it is told to release it.
    func heldCall() async throws
    /// Sends a control command (`held`, `release`) and returns the server's count.
    func control(_ command: String) async throws -> Int
    func shutdown() async
    /// The executor the bench's tasks prefer (`withTaskExecutorPreference`); nil for the default.
    var preferredExecutor: (any TaskExecutor)? { get }
}

extension UnaryCaller {
    var preferredExecutor: (any TaskExecutor)? { nil }
}

/// A server answer that was not what the bench asked for.
struct BenchFailure: Error, CustomStringConvertible {
    var description: String
}
