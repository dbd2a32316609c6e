import SwiftProtobuf

/// Why a call failed: a gRPC status code and message, the metadata the server sent, and the
/// underlying error when the failure happened on this side.
///
/// Every failure of a call is an `RPCError`: a server's non-OK status, a transport failure
/// (`unavailable` with a message that names the cause), a deadline (`deadlineExceeded`), a
/// cancellation (`cancelled`), a token provider's failure (`unauthenticated` or `unavailable`),
/// or a refused request (`invalidArgument`). Its text never contains credentials.
public struct RPCError: Error, Sendable, CustomStringConvertible {
    /// The status code.
    public var code: StatusCode
    /// The status message (`grpc-message`, percent-decoded), or a local explanation.
    public var message: String
    /// The response headers, when the server sent a header block before its trailers.
    public var headers: Metadata
    /// The trailers (or the single header block of a Trailers-Only response).
    public var trailers: Metadata
    /// The error behind a locally produced status (a transport failure, a token provider's error).
    public var cause: (any Error)?

    /// Creates an error.
    public init(
        code: StatusCode,
        message: String,
        headers: Metadata = [:],
        trailers: Metadata = [:],
        cause: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.headers = headers
        self.trailers = trailers
        self.cause = cause
    }

    /// The serialized `google.rpc.Status` the server sent in `grpc-status-details-bin`, if any.
    public var statusDetails: [UInt8]? {
        trailers.firstBinary(forKey: "grpc-status-details-bin")
    }

    /// The rich error model (`google.rpc.Status`) from `grpc-status-details-bin`, decoded;
    /// `nil` when the server sent none. Throws when the bytes are not a valid `google.rpc.Status`.
    public func decodedStatusDetails() throws -> Google_Rpc_Status? {
        guard let bytes = statusDetails else { return nil }
        return try Google_Rpc_Status(serializedBytes: bytes)
    }

    /// `CODE: message`, plus the cause when there is one.
    public var description: String {
        var text = "\(code): \(message)"
        if let cause, !message.contains(String(describing: cause)) {
            text += " (cause: \(cause))"
        }
        return text
    }
}
