import AuthRPC
import AuthRPCMetrics
import AuthRPCSystem
import CoreMetrics
import Foundation
import MetricsTestKit
import TestSupport
import Testing

/// MetricsInterceptor with swift-metrics' TestMetrics, around real calls to the fault server.
@Suite("Metrics: durations, attempts and token requests per method")
struct MetricsInterceptorTests {
    /// Answers a token once, then again after an invalidation: what a real provider's cache does.
    final class Provider: InvalidatableAuthTokenProvider {
        private let asked = Locked(0)
        var questions: Int { asked.withLock { $0 } }

        func token() async throws -> String {
            asked.withLock { $0 += 1 }
            return "token-\(questions)"
        }

        func invalidate(token: String) async {}
    }

    static func channel(_ metrics: TestMetrics) async throws -> Channel {
        let faults = try await Peers.faultServer()
        return try Channel(
            target: "\(faults.host):\(faults.port("h2c"))",
            transportSecurity: .plaintext,
            connectionBackoff: .patient,
            interceptors: [MetricsInterceptor(factory: metrics)]
        )
    }

    static func call(_ channel: Channel, _ scenario: String, options: CallOptions) async throws(RPCError) {
        _ = try await channel.unary(
            MethodDescriptor(service: "fault.Fault", method: scenario),
            request: Array("hello".utf8),
            serializer: RawBytesCodec(),
            deserializer: RawBytesCodec(),
            options: options
        )
    }

    static func dimensions(_ method: String, code: Int? = nil) -> [(String, String)] {
        var dimensions = [("rpc.system", "grpc"), ("rpc.service", "fault.Fault"), ("rpc.method", method)]
        if let code { dimensions.append(("rpc.grpc.status_code", String(code))) }
        return dimensions
    }

    @Test("rpc.client.duration per method and status; attempts and retries counted")
    func durationsAndAttempts() async throws {
        let metrics = TestMetrics()
        let channel = try await Self.channel(metrics)
        let policy = RetryPolicy(
            maxAttempts: 5,
            initialBackoff: .milliseconds(1),
            maxBackoff: .milliseconds(1),
            backoffMultiplier: 1
        )
        var options = CallOptions(timeout: .seconds(60), retryPolicy: policy)
        options.initialMetadata.addString("t-\(UUID().uuidString.lowercased())", forKey: "x-fault-tag")
        options.initialMetadata.addString("2", forKey: "x-fault-failures")
        try await Self.call(channel, "Retry", options: options)
        try await Self.call(channel, "Echo", options: CallOptions())
        await #expect(throws: RPCError.self) { try await Self.call(channel, "TrailersOnly", options: CallOptions()) }

        let retry = try metrics.expectTimer("rpc.client.duration", Self.dimensions("Retry", code: 0))
        #expect(retry.values.count == 1)
        #expect(retry.values.allSatisfy { $0 > 0 })
        #expect(try metrics.expectTimer("rpc.client.duration", Self.dimensions("Echo", code: 0)).values.count == 1)
        #expect(
            try metrics.expectTimer("rpc.client.duration", Self.dimensions("TrailersOnly", code: 16)).values.count == 1
        )
        #expect(try metrics.expectCounter("rpc.client.attempts", Self.dimensions("Retry")).totalValue == 3)
        #expect(try metrics.expectCounter("rpc.client.retries", Self.dimensions("Retry")).totalValue == 2)
        #expect(try metrics.expectCounter("rpc.client.attempts", Self.dimensions("Echo")).totalValue == 1)
    }

    @Test("token requests and invalidations are counted without knowing the provider's kind")
    func tokenEvents() async throws {
        let metrics = TestMetrics()
        let channel = try await Self.channel(metrics)
        let provider = Provider()
        let options = CallOptions(credentials: .provider(provider), allowsInsecureCredentials: true)
        try await Self.call(channel, "Echo", options: options)
        // UNAUTHENTICATED: the token is invalidated and a fresh one asked for, once.
        await #expect(throws: RPCError.self) { try await Self.call(channel, "TrailersOnly", options: options) }
        #expect(provider.questions == 3)
        #expect(try metrics.expectCounter("authrpc.client.token.requests", Self.dimensions("Echo")).totalValue == 1)
        #expect(
            try metrics.expectCounter("authrpc.client.token.requests", Self.dimensions("TrailersOnly")).totalValue == 2
        )
        #expect(
            try metrics.expectCounter("authrpc.client.token.invalidations", Self.dimensions("TrailersOnly"))
                .totalValue == 1
        )
        #expect(try metrics.expectCounter("rpc.client.attempts", Self.dimensions("TrailersOnly")).totalValue == 2)
        // No dimension carries a token.
        for counter in metrics.counters {
            #expect(!counter.dimensions.contains { $0.1.contains("token-") })
        }
    }
}
