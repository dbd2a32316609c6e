import AuthSampleService
import Foundation

/// The sizes and payloads the descriptions use.
enum Payloads {
    /// large_unary's request payload.
    static let largeRequestSize = 271_828
    /// large_unary's response payload.
    static let largeResponseSize = 314_159

    /// A request for `responseSize` bytes, carrying `requestSize` zero bytes.
    static func request(requestSize: Int, responseSize: Int) -> Grpc_Testing_SimpleRequest {
        var request = Grpc_Testing_SimpleRequest()
        request.responseType = .compressable
        request.responseSize = Int32(responseSize)
        request.payload.type = .compressable
        request.payload.body = Data(count: requestSize)
        return request
    }

    /// large_unary's request: 271828 zero bytes, asking for 314159.
    static func largeRequest() -> Grpc_Testing_SimpleRequest {
        request(requestSize: largeRequestSize, responseSize: largeResponseSize)
    }

    /// Fails unless the response payload is COMPRESSABLE and `size` zero bytes.
    static func check(_ response: Grpc_Testing_SimpleResponse, size: Int = largeResponseSize) throws(CaseFailure) {
        let body = response.payload.body
        try expectEqual("the response payload type", response.payload.type, .compressable)
        guard body.count == size else {
            throw CaseFailure(what: "the response payload", expected: "\(size) bytes", seen: "\(body.count) bytes")
        }
        if let index = body.firstIndex(where: { $0 != 0 }) {
            throw CaseFailure(
                what: "the response payload",
                expected: "zero bytes",
                seen: "byte \(index - body.startIndex) = \(body[index])"
            )
        }
    }
}
