public import AuthRPC
public import Tracing

/// Traces every call it runs around: one client span per call, named `service/method`, with
/// OpenTelemetry's RPC attributes, and the span's trace context injected into the request metadata
/// so the server's spans join the trace.
///
/// Put it first among a channel's interceptors, so the span covers the whole call (every retry,
/// token and connection included) and the other interceptors run inside it:
///
/// ```swift
/// let channel = try Channel(target: "pubsub.googleapis.com", interceptors: [TracingInterceptor()])
/// ```
///
/// The span:
/// - `rpc.system` `grpc`, `rpc.service`, `rpc.method`, `server.address` and `server.port` (the
///   channel's target), and `rpc.grpc.status_code` (the number) when the call ends;
/// - status error, with the call's error recorded, for any status other than OK;
/// - events for what the pipeline below the interceptors did: `rpc.attempt` (with
///   `rpc.attempt.number`), `rpc.retry.scheduled` (with `rpc.retry.delay_ms`),
///   `rpc.transparent_retry`, `rpc.token.requested`, `rpc.token.invalidated`.
///
/// Nothing of the request or response metadata becomes an attribute, so no token or other secret
/// does: the token is resolved below the interceptors and never reaches this one.
///
/// The trace context goes into the metadata through the tracer's instrument (`Tracer.inject`):
/// with an OpenTelemetry tracer that is W3C `traceparent` (and `tracestate`); whatever keys the
/// instrument writes are lower-cased as gRPC requires, and a value it writes replaces the
/// caller's under the same key.
public struct TracingInterceptor: ClientInterceptor {
    private let tracer: (any Tracer)?

    /// Creates the interceptor.
    ///
    /// - Parameter tracer: The tracer to use; `nil` (the default) uses `InstrumentationSystem.tracer`
    ///   as it is when each call starts.
    public init(tracer: (any Tracer)? = nil) {
        self.tracer = tracer
    }

    /// Runs the call inside a client span (the task's current span while it runs), with the
    /// span's context injected into its metadata; ends the span with the call's status.
    nonisolated(nonsending) public func intercept<Request, Response>(
        request: Request,
        context: ClientInterceptorContext,
        next:
            nonisolated(nonsending) (Request, ClientInterceptorContext) async throws(RPCError) -> UnaryResponse<
                Response
            >
    ) async throws(RPCError) -> UnaryResponse<Response> {
        let tracer = self.tracer ?? InstrumentationSystem.tracer
        let span = tracer.startSpan(
            "\(context.method.service)/\(context.method.method)",
            context: InstrumentationContext.current ?? .topLevel,
            ofKind: .client
        )
        span.attributes["rpc.system"] = "grpc"
        span.attributes["rpc.service"] = context.method.service
        span.attributes["rpc.method"] = context.method.method
        let (address, port) = Self.split(target: context.target)
        span.attributes["server.address"] = address
        if let port { span.attributes["server.port"] = port }

        var context = context
        tracer.inject(span.context, into: &context.metadata, using: MetadataInjector())
        let result: Result<UnaryResponse<Response>, RPCError>
        do throws(RPCError) {
            result = .success(
                try await Self.withCurrent(span.context) { () async throws(RPCError) in try await next(request, context)
                }
            )
        } catch {
            result = .failure(error)
        }
        switch result {
        case .success:
            span.attributes["rpc.grpc.status_code"] = 0
        case .failure(let error):
            span.attributes["rpc.grpc.status_code"] = error.code.rawValue
            span.setStatus(SpanStatus(code: .error, message: "\(error.code)"))
            span.recordError(error)
        }
        span.end()
        return try result.get()
    }

    /// Adds the pipeline's events to the call's span (the task's current span while the call
    /// runs inside it).
    public func observe(_ event: ClientCallEvent, context: ClientInterceptorContext) {
        let tracer = self.tracer ?? InstrumentationSystem.tracer
        guard let current = InstrumentationContext.current, let span = tracer.activeSpan(identifiedBy: current)
        else { return }
        var attributes: SpanAttributes = ["rpc.attempt.number": .int64(Int64(event.attempt))]
        let name: String
        switch event.kind {
        case .attemptStarted:
            name = "rpc.attempt"
        case .retryScheduled:
            name = "rpc.retry.scheduled"
            if let delay = event.delay {
                let (seconds, attoseconds) = delay.components
                let milliseconds: Double = Double(seconds) * 1000 + Double(attoseconds) / 1e15
                attributes["rpc.retry.delay_ms"] = milliseconds
            }
        case .transparentRetry:
            name = "rpc.transparent_retry"
        case .tokenRequested:
            name = "rpc.token.requested"
        case .tokenInvalidated:
            name = "rpc.token.invalidated"
        default:
            return
        }
        span.addEvent(SpanEvent(name: name, attributes: attributes))
    }

    /// Runs `operation` with `context` as the task's current instrumentation context, so spans
    /// started below (and the events above) belong to the call's span.
    nonisolated(nonsending) private static func withCurrent<Value>(
        _ context: InstrumentationContext,
        _ operation: nonisolated(nonsending) () async throws(RPCError) -> Value
    ) async throws(RPCError) -> Value {
        let outcome = await InstrumentationContext.$current.withValue(context) {
            () async -> Result<Value, RPCError> in
            do throws(RPCError) {
                return .success(try await operation())
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    /// `host` and `port` of a `host:port` or `[v6]:port` target.
    static func split(target: String) -> (address: String, port: Int?) {
        guard let colon = target.lastIndex(of: ":"), let port = Int(target[target.index(after: colon)...]) else {
            return (target, nil)
        }
        var host = target[..<colon]
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        return (String(host), port)
    }
}

/// Writes trace-context fields into request metadata.
struct MetadataInjector: Injector {
    func inject(_ value: String, forKey key: String, into metadata: inout Metadata) {
        metadata.replaceOrAddString(value, forKey: key.lowercased())
    }
}
