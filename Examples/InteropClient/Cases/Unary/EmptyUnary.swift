import AuthRPC
import AuthSampleService
import SwiftProtobuf

/// empty_unary: EmptyCall with the default Empty message succeeds with an empty message.
struct EmptyUnary: InteropCase {
    func run(_ context: CaseContext) async throws {
        let response = try await expectSuccess("EmptyCall") { () async throws(RPCError) in
            try await context.testService.emptyCall(Grpc_Testing_Empty(), options: context.options)
        }
        let unknown = response.message.unknownFields.data.count
        guard unknown == 0 else {
            throw CaseFailure(
                what: "the EmptyCall response",
                expected: "an empty message",
                seen: "\(unknown) bytes of fields"
            )
        }
    }
}
