import AuthRPC
import AuthSampleService

/// unimplemented_method and unimplemented_service: calling TestService/UnimplementedCall, or
/// UnimplementedService/UnimplementedCall, fails UNIMPLEMENTED.
struct Unimplemented: InteropCase {
    /// Whether to call the service no server implements rather than the method.
    let wholeService: Bool

    func run(_ context: CaseContext) async throws {
        let options = context.options
        if wholeService {
            let client = Grpc_Testing_UnimplementedServiceClient(channel: context.channel)
            try await expectFailure("UnimplementedService/UnimplementedCall", code: .unimplemented) {
                () async throws(RPCError) in
                try await client.unimplementedCall(Grpc_Testing_Empty(), options: options)
            }
        } else {
            try await expectFailure("TestService/UnimplementedCall", code: .unimplemented) {
                () async throws(RPCError) in
                try await context.testService.unimplementedCall(Grpc_Testing_Empty(), options: options)
            }
        }
    }
}
