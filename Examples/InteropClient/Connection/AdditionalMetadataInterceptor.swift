import AuthRPC

/// Adds `--additional_metadata`'s pairs to every call, as Go's interop client does with an
/// interceptor; a `-bin` key takes the value's UTF-8 bytes.
struct AdditionalMetadataInterceptor: ClientInterceptor {
    let metadata: AdditionalMetadata

    nonisolated(nonsending) func intercept<Request, Response>(
        request: Request,
        context: ClientInterceptorContext,
        next:
            nonisolated(nonsending) (Request, ClientInterceptorContext) async throws(RPCError) -> UnaryResponse<
                Response
            >
    ) async throws(RPCError) -> UnaryResponse<Response> {
        var context = context
        for (key, value) in metadata.pairs {
            if key.hasSuffix("-bin") {
                context.metadata.addBinary(Array(value.utf8), forKey: key)
            } else {
                context.metadata.addString(value, forKey: key)
            }
        }
        return try await next(request, context)
    }
}
