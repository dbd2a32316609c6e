import AuthRPC
import AuthSampleService

/// status_code_and_message and special_status_message (unary): the code and message asked for
/// in `response_status` come back exactly, whitespace and non-ASCII characters included.
struct StatusEcho: InteropCase {
    /// status_code_and_message's message.
    static let plainMessage = "test status message"
    /// special_status_message's message: whitespace, a BMP and a non-BMP character.
    static let specialMessage = "\t\ntest with whitespace\r\nand Unicode BMP \u{263A} and non-BMP \u{1F608}\t\n"

    let message: String

    func run(_ context: CaseContext) async throws {
        var request = Grpc_Testing_SimpleRequest()
        request.responseStatus.code = 2
        request.responseStatus.message = message
        let sent = request
        try await expectFailure("UnaryCall with response_status code 2", code: .unknown, message: message) {
            () async throws(RPCError) in
            try await context.testService.unaryCall(sent, options: context.options)
        }
    }
}
