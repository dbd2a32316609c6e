import AuthRPC

/// A typed client for the auth sample's `grpc.testing.TestService` (`UnaryCall` with
/// `Request`/`Response`): the server answers which user and which OAuth scope it saw.
public struct TestServiceClient: Sendable {
    /// `/grpc.testing.TestService/UnaryCall`.
    public static let unaryCallMethod = MethodDescriptor(service: "grpc.testing.TestService", method: "UnaryCall")

    /// The channel calls go through.
    public let channel: Channel

    /// Creates a client on `channel`.
    public init(channel: Channel) {
        self.channel = channel
    }

    /// Calls `UnaryCall`.
    ///
    /// - Parameter options: The call's options; the channel's defaults when `nil`.
    /// - Throws: `RPCError` for every failure.
    public func unaryCall(_ request: Grpc_Testing_Request, options: CallOptions? = nil) async throws(RPCError) -> UnaryResponse<Grpc_Testing_Response> {
        try await channel.unary(Self.unaryCallMethod, request: request, responseType: Grpc_Testing_Response.self, options: options)
    }
}
