import AuthRPC

/// A typed client for the unary methods of gRPC's interop `grpc.testing.TestService` (and the
/// `UnimplementedService` no server implements), as used by the interop test cases.
public struct InteropTestServiceClient: Sendable {
    /// `/grpc.testing.TestService/EmptyCall`.
    public static let emptyCallMethod = MethodDescriptor(service: "grpc.testing.TestService", method: "EmptyCall")
    /// `/grpc.testing.TestService/UnaryCall`.
    public static let unaryCallMethod = MethodDescriptor(service: "grpc.testing.TestService", method: "UnaryCall")
    /// `/grpc.testing.TestService/UnimplementedCall`: servers answer `unimplemented`.
    public static let unimplementedCallMethod = MethodDescriptor(service: "grpc.testing.TestService", method: "UnimplementedCall")
    /// `/grpc.testing.UnimplementedService/UnimplementedCall`: no server has this service.
    public static let unimplementedServiceMethod = MethodDescriptor(service: "grpc.testing.UnimplementedService", method: "UnimplementedCall")

    /// The channel calls go through.
    public let channel: Channel

    /// Creates a client on `channel`.
    public init(channel: Channel) {
        self.channel = channel
    }

    /// Calls `EmptyCall`.
    public func emptyCall(_ request: Grpc_Testing_Empty = Grpc_Testing_Empty(), options: CallOptions? = nil) async throws(RPCError) -> UnaryResponse<Grpc_Testing_Empty> {
        try await channel.unary(Self.emptyCallMethod, request: request, responseType: Grpc_Testing_Empty.self, options: options)
    }

    /// Calls `UnaryCall`.
    public func unaryCall(_ request: Grpc_Testing_SimpleRequest, options: CallOptions? = nil) async throws(RPCError) -> UnaryResponse<Grpc_Testing_SimpleResponse> {
        try await channel.unary(Self.unaryCallMethod, request: request, responseType: Grpc_Testing_SimpleResponse.self, options: options)
    }

    /// Calls `UnimplementedCall` on `TestService`.
    public func unimplementedCall(options: CallOptions? = nil) async throws(RPCError) -> UnaryResponse<Grpc_Testing_Empty> {
        try await channel.unary(Self.unimplementedCallMethod, request: Grpc_Testing_Empty(), responseType: Grpc_Testing_Empty.self, options: options)
    }

    /// Calls `UnimplementedCall` on `UnimplementedService`.
    public func unimplementedService(options: CallOptions? = nil) async throws(RPCError) -> UnaryResponse<Grpc_Testing_Empty> {
        try await channel.unary(Self.unimplementedServiceMethod, request: Grpc_Testing_Empty(), responseType: Grpc_Testing_Empty.self, options: options)
    }
}
