extension Channel {
    /// What a call's entry reads of its options, in one look at them: whether the call runs
    /// through interceptors (the channel's or its own) and the compression its request is framed
    /// with. Every look into an optional `CallOptions` copies all of it (the struct holds an
    /// existential, so the optimizer copies the payload out rather than read it in place), and a
    /// copy retains and releases each of its strings and arrays.
    @usableFromInline
    func entry(for options: CallOptions?) -> CallEntry {
        if let options {
            return CallEntry(
                intercepted: !interceptors.isEmpty || !options.interceptors.isEmpty,
                compression: options.compression
            )
        }
        return CallEntry(
            intercepted: !interceptors.isEmpty || !defaultCallOptions.interceptors.isEmpty,
            compression: defaultCallOptions.compression
        )
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
                let body = try frameRequest(request, serializer: serializer, compression: context.options.compression)
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
