import AuthRPC
import Foundation
import InMemoryTracing
import TestSupport
import Testing
import Tracing

@testable import AuthRPCTracing

/// TracingInterceptor with swift-distributed-tracing's in-memory tracer, around real calls to the
/// fault server (whose EchoRequest answers with the request's headers).
@Suite("Tracing: a client span per call")
struct TracingInterceptorTests {
    static func channel(_ tracer: InMemoryTracer) async throws -> Channel {
        let faults = try await Peers.faultServer()
        return try Channel(
            target: "\(faults.host):\(faults.port("h2c"))",
            transportSecurity: .plaintext,
            connectionBackoff: .patient,
            interceptors: [TracingInterceptor(tracer: tracer)]
        )
    }

    /// Calls a fault-server scenario with raw bytes.
    static func call(
        _ channel: Channel,
        _ scenario: String,
        options: CallOptions = CallOptions()
    ) async throws(RPCError) -> UnaryResponse<[UInt8]> {
        try await channel.unary(
            MethodDescriptor(service: "fault.Fault", method: scenario),
            request: Array("hello".utf8),
            serializer: RawBytesCodec(),
            deserializer: RawBytesCodec(),
            options: options
        )
    }

    /// The request's header fields as the server saw them (EchoRequest).
    static func echoedHeaders(_ response: UnaryResponse<[UInt8]>) throws -> [(String, String)] {
        let object = try JSONSerialization.jsonObject(with: Data(response.message)) as? [String: Any] ?? [:]
        return (object["headers"] as? [[String]] ?? []).map { ($0[0], $0[1]) }
    }

    /// The span's attributes by name.
    struct Attributes {
        let span: FinishedInMemorySpan
        subscript(_ name: String) -> SpanAttribute? { span.attributes.get(name) }
    }

    static func attributes(_ span: FinishedInMemorySpan) -> Attributes { Attributes(span: span) }

    @Test("the span: client kind, service/method name, rpc.* and server.* attributes, OK status code")
    func spanForACall() async throws {
        let tracer = InMemoryTracer()
        let channel = try await Self.channel(tracer)
        let response = try await Self.call(
            channel,
            "EchoRequest",
            options: CallOptions(credentials: .accessToken("secret-token-4711"), allowsInsecureCredentials: true)
        )
        let spans = tracer.finishedSpans
        #expect(spans.count == 1)
        let span = try #require(spans.first)
        #expect(span.operationName == "fault.Fault/EchoRequest")
        #expect(span.kind == .client)
        let faults = try await Peers.faultServer()
        let attributes = Self.attributes(span)
        #expect(attributes["rpc.system"] == .string("grpc"))
        #expect(attributes["rpc.service"] == .string("fault.Fault"))
        #expect(attributes["rpc.method"] == .string("EchoRequest"))
        #expect(attributes["server.address"] == .string(faults.host))
        #expect(attributes["server.port"] == .int64(Int64(faults.port("h2c"))))
        #expect(attributes["rpc.grpc.status_code"] == .int64(0))
        #expect(span.status == nil)
        #expect(span.errors.isEmpty)
        // The token went to the server, never into the span.
        let headers = try Self.echoedHeaders(response)
        #expect(headers.contains { $0 == ("authorization", "Bearer secret-token-4711") })
        #expect(!"\(span.attributes) \(span.events)".contains("secret-token"))

        // The span's context was injected through the tracer into the request metadata.
        #expect(headers.contains { $0 == (InMemoryTracer.traceIDKey, span.traceID) })
        #expect(headers.contains { $0 == (InMemoryTracer.spanIDKey, span.spanID) })
        #expect(tracer.performedContextInjections.count == 1)
    }

    @Test("a call inside a span is its child; the server gets the client span's ids")
    func childOfTheCurrentSpan() async throws {
        let tracer = InMemoryTracer()
        let channel = try await Self.channel(tracer)
        let parent = tracer.startSpan("parent")
        let response = try await InstrumentationContext.$current.withValue(parent.context) {
            try await Self.call(channel, "EchoRequest")
        }
        parent.end()
        let client = try #require(tracer.finishedSpans.first { $0.operationName == "fault.Fault/EchoRequest" })
        let root = try #require(tracer.finishedSpans.first { $0.operationName == "parent" })
        #expect(client.parentSpanID == root.spanID)
        #expect(client.traceID == root.traceID)
        #expect(try Self.echoedHeaders(response).contains { $0 == (InMemoryTracer.spanIDKey, client.spanID) })
    }

    @Test("a failed call: error status, the error recorded, its code; retries become span events")
    func failedCallWithRetries() async throws {
        let tracer = InMemoryTracer()
        let channel = try await Self.channel(tracer)
        var options = CallOptions(
            timeout: .seconds(60),
            retryPolicy: RetryPolicy(
                maxAttempts: 3,
                initialBackoff: .milliseconds(1),
                maxBackoff: .milliseconds(1),
                backoffMultiplier: 1
            )
        )
        options.initialMetadata.addString("t-\(UUID().uuidString.lowercased())", forKey: "x-fault-tag")
        options.initialMetadata.addString("100", forKey: "x-fault-failures")
        await #expect(throws: RPCError.self) { try await Self.call(channel, "Retry", options: options) }
        let span = try #require(tracer.finishedSpans.first)
        #expect(Self.attributes(span)["rpc.grpc.status_code"] == .int64(14))
        #expect(span.status?.code == .error)
        #expect((span.errors.first?.error as? RPCError)?.code == .unavailable)
        #expect(
            span.events.map(\.name) == [
                "rpc.attempt", "rpc.retry.scheduled", "rpc.attempt", "rpc.retry.scheduled", "rpc.attempt",
            ]
        )
        #expect(span.events.last?.attributes.get("rpc.attempt.number") == .int64(3))
    }

    @Test("target parsing for server.address and server.port")
    func targets() {
        #expect(TracingInterceptor.split(target: "example.com:443") == ("example.com", 443))
        #expect(TracingInterceptor.split(target: "[::1]:8443") == ("::1", 8443))
        #expect(TracingInterceptor.split(target: "example.com") == ("example.com", nil))
    }
}
