import AuthRPC
import AuthSampleService
import Foundation

/// custom_metadata, unary half: `x-grpc-test-echo-initial` comes back once in the response
/// headers and `x-grpc-test-echo-trailing-bin` (0xababab) once in the trailers, on a large call.
struct CustomMetadata: InteropCase {
    static let initialKey = "x-grpc-test-echo-initial"
    static let initialValue = "test_initial_metadata_value"
    static let trailingKey = "x-grpc-test-echo-trailing-bin"
    static let trailingValue: [UInt8] = [0xAB, 0xAB, 0xAB]

    func run(_ context: CaseContext) async throws {
        var options = context.options
        options.initialMetadata.addString(Self.initialValue, forKey: Self.initialKey)
        options.initialMetadata.addBinary(Self.trailingValue, forKey: Self.trailingKey)
        let sent = options
        let response = try await expectSuccess("UnaryCall") { () async throws(RPCError) in
            try await context.testService.unaryCall(Payloads.largeRequest(), options: sent)
        }
        try Payloads.check(response.message)
        let initial = response.headers.strings(forKey: Self.initialKey)
        guard initial == [Self.initialValue] else {
            throw CaseFailure(
                what: "\(Self.initialKey) in the response headers",
                expected: "one value \(Printable.quoted(Self.initialValue))",
                seen: initial.isEmpty ? "none" : initial.map(Printable.quoted).joined(separator: ", ")
            )
        }
        let trailing = response.trailers.binaries(forKey: Self.trailingKey)
        guard trailing == [Self.trailingValue] else {
            throw CaseFailure(
                what: "\(Self.trailingKey) in the trailers",
                expected: "one value 0xababab",
                seen: trailing.isEmpty
                    ? "none"
                    : trailing.map { "0x" + $0.map { String(format: "%02x", $0) }.joined() }
                        .joined(separator: ", ")
            )
        }
    }
}
