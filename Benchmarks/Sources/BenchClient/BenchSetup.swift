import AuthSampleService
import Foundation

/// What every implementation is given: where the server is and what to send.
struct BenchSetup: Sendable {
    var tls: Bool
    var port: Int
    var caPath: String
    var payload: Int

    /// The request: `payload` bytes out, `payload` bytes asked back.
    var request: Grpc_Testing_SimpleRequest {
        var request = Grpc_Testing_SimpleRequest()
        request.responseSize = Int32(payload)
        request.payload.body = Data(count: payload)
        return request
    }

    /// A bearer token, sent on every call as a real client would.
    static let token = "bench-token-0123456789abcdef0123456789abcdef"
}

/// One implementation's unary call.
protocol UnaryCaller: Sendable {
    /// Makes one call; throws on any non-OK outcome.
    func call() async throws
    func shutdown() async
}
