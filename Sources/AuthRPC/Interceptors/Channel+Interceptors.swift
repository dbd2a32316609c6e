extension Channel {
    /// Whether a call with these options runs through interceptors (the channel's or its own).
    @usableFromInline
    func hasInterceptors(_ options: CallOptions?) -> Bool {
        !interceptors.isEmpty || !(options?.interceptors ?? defaultCallOptions.interceptors).isEmpty
    }

    /// `intercepted`, for `unary`: specialized for the messages but not inlined (so the request
    /// is handed over as the caller holds it), and with the response boxed (one word, where a
    /// `UnaryResponse` returned from an async call takes room for itself in the caller's frame).
    /// Both would otherwise be kept in the frame of every call, interceptors or not.
    @inlinable @inline(never)
    nonisolated(nonsending) func interceptedResponse<Serializer: MessageSerializer, Deserializer: MessageDeserializer>(
        _ method: MethodDescriptor,
        request: Serializer.Message,
        serializer: Serializer,
        deserializer: Deserializer,
        options: CallOptions?,
        serviceConfig: ServiceConfig?
    ) async throws(RPCError) -> UnaryResponseBox<Deserializer.Message> {
        UnaryResponseBox(
            try await intercepted(
                method,
                request: request,
                serializer: serializer,
                deserializer: deserializer,
                options: options,
                serviceConfig: serviceConfig
            )
        )
    }

    /// A call through its interceptors: the channel's, then the call's, the first outermost; the
    /// innermost `next` is the call itself (service-config defaults, retries, token, stream), and
    /// each interceptor is told the events of the call below it.
    // Generic but not inlinable: calls with interceptors pay for a closure per interceptor anyway,
    // and calls without them never come here.
    @usableFromInline
    nonisolated(nonsending) func intercepted<Serializer: MessageSerializer, Deserializer: MessageDeserializer>(
        _ method: MethodDescriptor,
        request: Serializer.Message,
        serializer: Serializer,
        deserializer: Deserializer,
        options: CallOptions?,
        serviceConfig: ServiceConfig?
    ) async throws(RPCError) -> UnaryResponse<Deserializer.Message> {
        // The channel's defaults are read here, not by the inlined caller: a copy of the options
        // made there would take room in every call's frame, interceptors or not.
        let options = options ?? defaultCallOptions
        let chain = interceptors + options.interceptors
        let context = ClientInterceptorContext(
            method: method,
            options: options,
            target: target,
            channelAuthority: defaultAuthority
        )
        let observers = CallObservers(chain, context: context)

        nonisolated(nonsending) func run(
            _ index: Int,
            _ request: Serializer.Message,
            _ context: ClientInterceptorContext
        ) async throws(RPCError) -> UnaryResponse<Deserializer.Message> {
            guard index < chain.count else {
                let body = try frameRequest(request, serializer: serializer, options: context.options)
                return try await perform(
                    context.method,
                    body: body,
                    options: context.options,
                    serviceConfig: serviceConfig,
                    observers: observers
                ).decode(deserializer).get()
            }
            return try await chain[index].intercept(request: request, context: context) {
                (request, context) async throws(RPCError) -> UnaryResponse<Deserializer.Message> in
                try await run(index + 1, request, context)
            }
        }
        return try await run(0, request, context)
    }
}
