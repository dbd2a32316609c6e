import AuthRPC
import AuthSampleService

/// client_compressed_unary: the uncompressed probe that expects compression fails
/// INVALID_ARGUMENT (the server checks CompressedRequest), a gzip-compressed request that expects
/// compression succeeds, and an uncompressed one that does not expect it succeeds.
struct ClientCompressedUnary: InteropCase {
    func run(_ context: CaseContext) async throws {
        var request = Payloads.largeRequest()
        request.expectCompressed.value = true
        let probe = request
        try await expectFailure(
            "the uncompressed probe with expect_compressed=true",
            code: .invalidArgument
        ) { () async throws(RPCError) in
            try await context.testService.unaryCall(probe, options: context.options)
        }

        var compressed = context.options
        compressed.compression = .gzip
        let compressedRequest = request
        let first = try await expectSuccess("the gzip-compressed UnaryCall") { () async throws(RPCError) in
            try await context.testService.unaryCall(compressedRequest, options: compressed)
        }
        try Payloads.check(first.message)

        request.expectCompressed.value = false
        let plainRequest = request
        let second = try await expectSuccess("the uncompressed UnaryCall") { () async throws(RPCError) in
            try await context.testService.unaryCall(plainRequest, options: context.options)
        }
        try Payloads.check(second.message)
    }
}
