import AuthRPC
import AuthSampleService

/// large_unary: 271828 zero bytes out, 314159 zero bytes back.
struct LargeUnary: InteropCase {
    func run(_ context: CaseContext) async throws {
        let response = try await expectSuccess("UnaryCall") { () async throws(RPCError) in
            try await context.testService.unaryCall(Payloads.largeRequest(), options: context.options)
        }
        try Payloads.check(response.message)
    }
}
