import AuthRPC
import AuthSampleService

/// server_compressed_unary: with `response_compressed` true the response message has its
/// compressed flag set, with false it does not; both carry 314159 zero bytes.
struct ServerCompressedUnary: InteropCase {
    func run(_ context: CaseContext) async throws {
        for compressed in [true, false] {
            var request = Payloads.largeRequest()
            request.responseCompressed.value = compressed
            let sent = request
            let response = try await expectSuccess("UnaryCall with response_compressed=\(compressed)") {
                () async throws(RPCError) in
                try await context.testService.unaryCall(sent, options: context.options)
            }
            try expectEqual(
                "the response's compressed flag with response_compressed=\(compressed)",
                response.messageWasCompressed,
                compressed
            )
            try Payloads.check(response.message)
        }
    }
}
