/// Code that runs around a channel's unary calls: to add metadata, observe or replace the response
/// or the error, or call the rest of the pipeline again.
///
/// Where an interceptor sits in a call (`Channel.unary`), from the outside in:
///
/// 1. **Interceptors**: the channel's (``Channel/interceptors``), then the call's
///    (``CallOptions/interceptors``), the first outermost. Each sees the options the caller gave
///    (or the channel's defaults), before anything below is applied.
/// 2. **Service-config defaults**: the method's ``MethodConfig`` fills in what the options leave
///    unset (timeout, retry policy, message limits).
/// 3. **The retry executor**: the attempts of the ``RetryPolicy``, the transparent retries of
///    requests the server never processed, the one retry after an `unauthenticated` answer; one
///    deadline for all of them, starting when `next` is called.
/// 4. **The token**: resolved for each attempt, after the audience is checked (on TLS channels a
///    call's authority must be a name the server's certificate covers). An interceptor never sees
///    a token: it is added to the request below it.
/// 5. **The stream**: one HTTP/2 stream per attempt.
///
/// So an interceptor's `next` runs steps 2 to 5 once (however many attempts that takes) and
/// answers with the call's final response or error. Calling `next` again starts the whole call
/// again, with a new deadline. What happens inside is reported to ``observe(_:context:)``.
///
/// ```swift
/// struct RequestID: ClientInterceptor {
///     func intercept<Request, Response>(
///         request: Request,
///         context: ClientInterceptorContext,
///         next: nonisolated(nonsending) (Request, ClientInterceptorContext) async throws(RPCError) -> UnaryResponse<Response>
///     ) async throws(RPCError) -> UnaryResponse<Response> {
///         var context = context
///         context.metadata.addString(UUID().uuidString, forKey: "x-request-id")
///         return try await next(request, context)
///     }
/// }
/// ```
public protocol ClientInterceptor: Sendable {
    /// Runs around one call: may change the request or the context (its options and metadata)
    /// before calling `next`, look at or replace what `next` answers or throws, call `next` more
    /// than once, or answer without calling it.
    ///
    /// - Parameters:
    ///   - request: The request message.
    ///   - context: The method, the call's options (with its metadata) and the channel's target.
    ///   - next: The rest of the pipeline: the following interceptors, then the call itself.
    /// - Returns: The call's response, as the caller will see it.
    /// - Throws: ``RPCError``, as the caller will see it.
    nonisolated(nonsending) func intercept<Request, Response>(
        request: Request,
        context: ClientInterceptorContext,
        next:
            nonisolated(nonsending) (Request, ClientInterceptorContext) async throws(RPCError) -> UnaryResponse<
                Response
            >
    ) async throws(RPCError) -> UnaryResponse<Response>

    /// Told what the pipeline below the interceptors does for a call this interceptor runs
    /// around: attempts, retries and their waits, token requests and invalidations. Called on the
    /// call's task, synchronously, while the call goes on: it must not block. Does nothing by
    /// default.
    func observe(_ event: ClientCallEvent, context: ClientInterceptorContext)
}

extension ClientInterceptor {
    /// Ignores the event.
    public func observe(_ event: ClientCallEvent, context: ClientInterceptorContext) {}
}
