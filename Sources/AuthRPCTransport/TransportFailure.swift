/// Why an HTTP/2 connection or stream failed (or an HTTP/1.1 exchange, which connects the same
/// way and fails with the same cases).
///
/// Every case says enough for a person to act on it and never carries request or response
/// contents (which may hold credentials).
///
/// The cases that carry more than one string are indirect: every waiting call's frame has room
/// for an answer that may be a failure, and a failure can afford the box that a success never pays.
package enum TransportFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The host name did not resolve.
    indirect case resolutionFailed(host: String, reason: String)
    /// No usable connection could be made: TCP failed for every resolved address, or the peer
    /// did not speak HTTP/2.
    indirect case connectFailed(target: String, reason: String, kind: ConnectFailureKind)
    /// The HTTP proxy did not open a tunnel to the target: it refused `CONNECT` (the reason
    /// holds its status line), answered something that is not HTTP or is over the bounds, closed
    /// the connection, or did not answer in time. Nothing reached the target.
    indirect case proxyFailed(proxy: String, target: String, reason: String)
    /// An address that cannot be used (not an IP literal, a unix socket path too long).
    case invalidAddress(String)
    /// An HTTP/1.1 request that cannot be written as asked (a header value with a line break);
    /// nothing was sent.
    case invalidRequest(String)
    /// The TLS handshake failed, or the server is not acceptable.
    indirect case tls(TLSFailure)
    /// The connection ended. `streamWasSent` is `false` when this stream's HEADERS never left,
    /// so the server cannot have processed it and the request is safe to retry.
    indirect case connectionClosed(reason: String, streamWasSent: Bool)
    /// The server sent GOAWAY and did not process this stream (its id was above `last_stream_id`),
    /// or the connection stopped taking new streams. Always safe to retry on a new connection.
    indirect case goaway(errorCode: UInt32, debugData: String)
    /// The server reset the stream with an HTTP/2 error code.
    case streamReset(errorCode: UInt32)
    /// The request's deadline passed; the stream was reset with CANCEL.
    case deadlineExceeded
    /// The caller's task was cancelled; the stream was reset with CANCEL.
    case cancelled
    /// The response body grew past the request's limit; the stream was reset with CANCEL.
    case responseBodyTooLarge(limit: Int)
    /// The request's header block is larger than the peer accepts (SETTINGS_MAX_HEADER_LIST_SIZE).
    indirect case headerListTooLarge(size: Int, limit: Int)
    /// A response header block (headers, a 1xx block or trailers) grew past the client's limit
    /// (name + value + 32 per field); the stream was reset without decoding the rest.
    case responseHeaderListTooLarge(limit: Int)
    /// The peer did not answer a keepalive PING in time.
    case keepaliveTimeout
    /// nghttp2 refused the request or the peer broke the protocol.
    case protocolError(String)

    /// `true` when the server cannot have processed the request, so sending it again is safe.
    package var isRetrySafe: Bool {
        switch self {
        case .resolutionFailed, .connectFailed, .proxyFailed, .invalidAddress, .invalidRequest, .tls, .goaway:
            return true
        case .connectionClosed(_, let sent):
            return !sent
        case .streamReset(let code):
            return code == HTTP2ErrorCode.refusedStream
        case .deadlineExceeded, .cancelled, .responseBodyTooLarge, .headerListTooLarge, .responseHeaderListTooLarge,
            .keepaliveTimeout, .protocolError:
            return false
        }
    }

    package var description: String {
        switch self {
        case .resolutionFailed(let host, let reason):
            return "could not resolve host '\(host)': \(reason)"
        case .connectFailed(let target, let reason, _):
            return "could not connect to \(target): \(reason)"
        case .proxyFailed(let proxy, let target, let reason):
            return "could not connect to \(target) through the HTTP proxy \(proxy): \(reason)"
        case .invalidAddress(let reason):
            return "invalid address: \(reason)"
        case .invalidRequest(let reason):
            return "invalid request: \(reason)"
        case .tls(let failure):
            return failure.description
        case .connectionClosed(let reason, let sent):
            return "connection closed (\(reason))" + (sent ? "" : "; the request was not sent")
        case .goaway(let code, let debug):
            let detail = debug.isEmpty ? "" : ", \(debug)"
            return "server sent GOAWAY (\(HTTP2ErrorCode.name(code))\(detail)); the request was not processed"
        case .streamReset(let code):
            return "stream reset by the server (\(HTTP2ErrorCode.name(code)))"
        case .deadlineExceeded:
            return "deadline exceeded"
        case .cancelled:
            return "cancelled by the caller"
        case .responseBodyTooLarge(let limit):
            return "response larger than the limit of \(limit) bytes"
        case .headerListTooLarge(let size, let limit):
            return "request header list of \(size) bytes exceeds the server's limit of \(limit) bytes"
        case .responseHeaderListTooLarge(let limit):
            return
                "response header list larger than the limit of \(limit) bytes (name + value + 32 per field); the stream was reset"
        case .keepaliveTimeout:
            return "keepalive ping not answered in time"
        case .protocolError(let reason):
            return "HTTP/2 protocol error: \(reason)"
        }
    }
}

/// Why connecting failed, for callers that react differently to each.
package enum ConnectFailureKind: Sendable, Equatable {
    /// Every address refused the connection (nothing listens on the port).
    case refused
    /// An attempt ran out of time.
    case timedOut
    /// The network or host is unreachable.
    case unreachable
    /// The peer accepted TCP but does not speak HTTP/2 (or closed before its SETTINGS).
    case notHTTP2
    /// The connection was closed before the attempt finished.
    case abandoned
    /// The server broke the HTTP/2 protocol before the connection was ready (say, SETTINGS
    /// with a value out of range); the client ended the connection at once.
    case protocolViolation
    /// Another socket error.
    case other
}

/// A TLS failure, classified so callers can tell an untrusted certificate from a wrong name.
package struct TLSFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure it was.
    package enum Kind: Sendable, Equatable {
        /// The server's certificate chain does not lead to a trusted root.
        case untrustedCertificate
        /// The certificate is valid but not for the name (or IP address) that was asked for.
        case hostnameMismatch
        /// The certificate expired or is not yet valid.
        case certificateExpired
        /// The server did not select ALPN `h2`.
        case alpnNotNegotiated
        /// The handshake failed for another reason (protocol version, alert, reset).
        case handshakeFailed
        /// The local configuration is unusable (bad PEM, key does not match certificate).
        case invalidConfiguration
    }

    package var kind: Kind
    /// OpenSSL's own explanation, for the log and the error message.
    package var detail: String

    package init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    package var description: String {
        switch kind {
        case .untrustedCertificate: return "TLS: server certificate not trusted (\(detail))"
        case .hostnameMismatch: return "TLS: hostname mismatch (\(detail))"
        case .certificateExpired: return "TLS: server certificate expired or not yet valid (\(detail))"
        case .alpnNotNegotiated: return "TLS: server did not negotiate HTTP/2 with ALPN h2 (\(detail))"
        case .handshakeFailed: return "TLS handshake failed (\(detail))"
        case .invalidConfiguration: return "TLS configuration invalid (\(detail))"
        }
    }
}

/// HTTP/2 error codes (RFC 9113 section 7) and their names.
package enum HTTP2ErrorCode {
    package static let noError: UInt32 = 0x0
    package static let protocolError: UInt32 = 0x1
    package static let internalError: UInt32 = 0x2
    package static let flowControlError: UInt32 = 0x3
    package static let settingsTimeout: UInt32 = 0x4
    package static let streamClosed: UInt32 = 0x5
    package static let frameSizeError: UInt32 = 0x6
    package static let refusedStream: UInt32 = 0x7
    package static let cancel: UInt32 = 0x8
    package static let compressionError: UInt32 = 0x9
    package static let connectError: UInt32 = 0xa
    package static let enhanceYourCalm: UInt32 = 0xb
    package static let inadequateSecurity: UInt32 = 0xc
    package static let http11Required: UInt32 = 0xd

    private static let names = [
        "NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT",
        "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR",
        "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED",
    ]

    /// The code's name, or its hex value when it is not one RFC 9113 defines.
    package static func name(_ code: UInt32) -> String {
        code < names.count ? names[Int(code)] : "0x" + String(code, radix: 16)
    }
}
