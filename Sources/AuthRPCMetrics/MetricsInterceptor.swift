public import AuthRPC
public import CoreMetrics

/// Records metrics for every call it runs around, through swift-metrics:
///
/// | metric | kind | dimensions | what |
/// |---|---|---|---|
/// | `rpc.client.duration` | timer | `rpc.system`, `rpc.service`, `rpc.method`, `rpc.grpc.status_code` | each call, from the interceptor to its answer (every attempt, backoff, token and connection included) |
/// | `rpc.client.attempts` | counter | `rpc.system`, `rpc.service`, `rpc.method` | each attempt started: the first of a call, each retry of its ``RetryPolicy``, the retry with a fresh token |
/// | `rpc.client.retries` | counter | same | each retry scheduled after a failed attempt |
/// | `authrpc.client.token.requests` | counter | same | each time the call's token provider had no fresh cached token and was asked (a refresh starts, or the call joins one in flight) |
/// | `authrpc.client.token.invalidations` | counter | same | each token the server rejected (`unauthenticated`) and the call handed back to its provider |
///
/// The token counters come from the pipeline's events (``ClientInterceptor/observe(_:context:)``),
/// so they count what calls ask of providers of any kind (an `AuthSession`, Google credentials,
/// a provider of your own) without AuthRPC or this product knowing the kind. Status codes are the
/// numbers of `grpc-status` (`0` for OK). No metadata, token or message goes into a dimension.
///
/// Put it first among a channel's interceptors, so the duration covers the others too:
///
/// ```swift
/// let channel = try Channel(target: "pubsub.googleapis.com", interceptors: [MetricsInterceptor()])
/// ```
public struct MetricsInterceptor: ClientInterceptor {
    private let factory: (any MetricsFactory)?

    /// Creates the interceptor.
    ///
    /// - Parameter factory: Where the metrics go; `nil` (the default) uses
    ///   `MetricsSystem.factory` as it is when each metric is recorded.
    public init(factory: (any MetricsFactory)? = nil) {
        self.factory = factory
    }

    /// Times the call and records `rpc.client.duration` with its status code.
    nonisolated(nonsending) public func intercept<Request, Response>(
        request: Request,
        context: ClientInterceptorContext,
        next:
            nonisolated(nonsending) (Request, ClientInterceptorContext) async throws(RPCError) -> UnaryResponse<
                Response
            >
    ) async throws(RPCError) -> UnaryResponse<Response> {
        let start = ContinuousClock.now
        let result: Result<UnaryResponse<Response>, RPCError>
        do throws(RPCError) {
            result = .success(try await next(request, context))
        } catch {
            result = .failure(error)
        }
        let elapsed = ContinuousClock.now - start
        let code: Int
        switch result {
        case .success: code = 0
        case .failure(let error): code = error.code.rawValue
        }
        var dimensions = Self.dimensions(context.method)
        dimensions.append(("rpc.grpc.status_code", String(code)))
        let (seconds, attoseconds) = elapsed.components
        Timer(label: "rpc.client.duration", dimensions: dimensions, factory: factory ?? MetricsSystem.factory)
            .recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        return try result.get()
    }

    /// Counts attempts, retries, token requests and invalidations.
    public func observe(_ event: ClientCallEvent, context: ClientInterceptorContext) {
        let label: String
        switch event.kind {
        case .attemptStarted: label = "rpc.client.attempts"
        case .retryScheduled: label = "rpc.client.retries"
        case .tokenRequested: label = "authrpc.client.token.requests"
        case .tokenInvalidated: label = "authrpc.client.token.invalidations"
        default: return
        }
        Counter(label: label, dimensions: Self.dimensions(context.method), factory: factory ?? MetricsSystem.factory)
            .increment()
    }

    private static func dimensions(_ method: MethodDescriptor) -> [(String, String)] {
        [("rpc.system", "grpc"), ("rpc.service", method.service), ("rpc.method", method.method)]
    }
}
