import HTTP2Client

/// Maps HTTP/2 failures to gRPC statuses (GRPC_CONFORMANCE.md, "Stream and connection errors").
enum TransportErrors {
    /// The status a failed exchange ends with. A cancellation seen after the deadline passed is
    /// reported as `deadlineExceeded`.
    static func rpcError(for error: HTTP2Error, deadline: ContinuousClock.Instant?) -> RPCError {
        let code = statusCode(for: error)
        if code == .cancelled, let deadline, deadline <= .now {
            return RPCError(code: .deadlineExceeded, message: "deadline exceeded")
        }
        switch error {
        case .deadlineExceeded, .cancelled:
            return RPCError(code: code, message: error.description)
        default:
            return RPCError(code: code, message: error.description, cause: TransportError(error))
        }
    }

    static func statusCode(for error: HTTP2Error) -> StatusCode {
        switch error {
        case .resolutionFailed, .connectFailed, .tls, .connectionClosed, .goaway, .keepaliveTimeout:
            return .unavailable
        case .streamReset(let code):
            switch code {
            case HTTP2ErrorCode.refusedStream: return .unavailable
            case HTTP2ErrorCode.cancel: return .cancelled
            case HTTP2ErrorCode.enhanceYourCalm: return .resourceExhausted
            case HTTP2ErrorCode.inadequateSecurity: return .permissionDenied
            default: return .internalError
            }
        case .deadlineExceeded:
            return .deadlineExceeded
        case .cancelled:
            return .cancelled
        case .responseBodyTooLarge, .headerListTooLarge:
            return .resourceExhausted
        case .protocolError:
            return .internalError
        }
    }
}
