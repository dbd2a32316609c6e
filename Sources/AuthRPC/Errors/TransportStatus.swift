import AuthRPCTransport

// Maps HTTP/2 failures to gRPC statuses (GRPC_CONFORMANCE.md, "Stream and connection errors").
extension RPCError {
    /// The status a failed exchange ends with. A cancellation seen after the deadline passed is
    /// reported as `deadlineExceeded`.
    init(transportFailure error: TransportFailure, deadline: ContinuousClock.Instant?) {
        let code = StatusCode(transportFailure: error)
        if code == .cancelled, let deadline, deadline <= .now {
            self.init(code: .deadlineExceeded, message: "deadline exceeded")
            return
        }
        switch error {
        case .deadlineExceeded, .cancelled:
            self.init(code: code, message: error.description)
        default:
            self.init(code: code, message: error.description, cause: TransportError(error))
        }
    }
}

extension StatusCode {
    /// The code for an HTTP/2 failure.
    init(transportFailure error: TransportFailure) {
        self =
            switch error {
            case .resolutionFailed, .connectFailed, .proxyFailed, .tls, .connectionClosed, .goaway, .keepaliveTimeout:
                .unavailable
            case .invalidAddress, .invalidRequest:
                .invalidArgument
            case .streamReset(let code):
                switch code {
                case HTTP2ErrorCode.refusedStream: .unavailable
                case HTTP2ErrorCode.cancel: .cancelled
                case HTTP2ErrorCode.enhanceYourCalm: .resourceExhausted
                case HTTP2ErrorCode.inadequateSecurity: .permissionDenied
                default: .internalError
                }
            case .deadlineExceeded:
                .deadlineExceeded
            case .cancelled:
                .cancelled
            case .responseBodyTooLarge, .headerListTooLarge, .responseHeaderListTooLarge:
                .resourceExhausted
            case .protocolError:
                .internalError
            }
    }
}
