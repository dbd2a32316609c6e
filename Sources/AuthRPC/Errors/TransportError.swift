import HTTP2Client

/// What went wrong below gRPC: the connection, TLS, or HTTP/2. It is the ``RPCError/cause`` of
/// every status a call produces locally for a transport failure, so callers can react to the
/// kind of failure (say, tell a user to check the certificate) without parsing messages.
public struct TransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public enum Kind: Sendable, Hashable {
        /// The host name did not resolve.
        case hostNotFound
        /// Nothing listens on the port (every address refused).
        case connectionRefused
        /// Connecting took longer than the connect timeout.
        case connectTimeout
        /// The network or host is unreachable.
        case networkUnreachable
        /// The server's certificate does not chain to a trusted root.
        case untrustedCertificate
        /// The certificate is not valid for the server's name or address.
        case hostnameMismatch
        /// The certificate has expired or is not yet valid.
        case certificateExpired
        /// The server did not agree to HTTP/2 (ALPN `h2`), or does not speak it.
        case http2NotSupported
        /// Another TLS handshake failure.
        case tlsHandshakeFailed
        /// The channel's TLS material (PEM certificates or key) is unusable.
        case invalidTLSConfiguration
        /// The connection ended (closed by the server, reset, or shut down by the client).
        case connectionClosed
        /// The server sent GOAWAY without processing the call.
        case goaway
        /// The server reset the call's stream with this HTTP/2 error code.
        case streamReset(errorCode: UInt32)
        /// The server stopped answering keepalive PINGs.
        case keepaliveTimeout
        /// The response (its message, or a header block) was larger than the limit allowed.
        case responseTooLarge
        /// The request's headers were larger than the server accepts.
        case headersTooLarge
        /// The server broke the HTTP/2 protocol.
        case protocolViolation
        /// Another socket error.
        case other
    }

    /// The kind of failure.
    public var kind: Kind
    /// What happened, for people: it names the cause and the address.
    public var message: String

    /// Creates an error.
    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    /// The ``message``.
    public var description: String { message }

    init(_ error: HTTP2Error) {
        message = error.description
        switch error {
        case .resolutionFailed:
            kind = .hostNotFound
        case .connectFailed(_, _, let reason):
            switch reason {
            case .refused: kind = .connectionRefused
            case .timedOut: kind = .connectTimeout
            case .unreachable: kind = .networkUnreachable
            case .notHTTP2: kind = .http2NotSupported
            case .abandoned: kind = .connectionClosed
            case .other: kind = .other
            }
        case .tls(let failure):
            switch failure.kind {
            case .untrustedCertificate: kind = .untrustedCertificate
            case .hostnameMismatch: kind = .hostnameMismatch
            case .certificateExpired: kind = .certificateExpired
            case .alpnNotNegotiated: kind = .http2NotSupported
            case .handshakeFailed: kind = .tlsHandshakeFailed
            case .invalidConfiguration: kind = .invalidTLSConfiguration
            }
        case .connectionClosed:
            kind = .connectionClosed
        case .goaway:
            kind = .goaway
        case .streamReset(let code):
            kind = .streamReset(errorCode: code)
        case .keepaliveTimeout:
            kind = .keepaliveTimeout
        case .responseBodyTooLarge, .responseHeaderListTooLarge:
            kind = .responseTooLarge
        case .headerListTooLarge:
            kind = .headersTooLarge
        case .protocolError:
            kind = .protocolViolation
        case .deadlineExceeded, .cancelled:
            kind = .other
        }
    }
}
