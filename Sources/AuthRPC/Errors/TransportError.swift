// `package`: OAuth2's HTTP/1.1 transport reports its failures as this type, as channels do.
package import AuthRPCTransport

/// What went wrong below gRPC: the connection, TLS, or HTTP/2. It is the ``RPCError/cause`` of
/// every status a call produces locally for a transport failure, so callers can react to the
/// kind of failure (say, tell a user to check the certificate) without parsing messages.
public struct TransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    ///
    /// A struct rather than an enum so that later versions can tell more kinds apart without
    /// breaking code that compares kinds. Compare with `==`, or `switch`
    /// with a `default` case.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        enum Wrapped: Sendable, Hashable {
            case hostNotFound
            case connectionRefused
            case connectTimeout
            case networkUnreachable
            case proxyFailed
            case invalidAddress
            case untrustedCertificate
            case hostnameMismatch
            case certificateExpired
            case http2NotSupported
            case tlsHandshakeFailed
            case invalidTLSConfiguration
            case connectionClosed
            case goaway
            case streamReset
            case keepaliveTimeout
            case responseTooLarge
            case headersTooLarge
            case protocolViolation
            case other
        }

        let wrapped: Wrapped

        private init(_ wrapped: Wrapped) {
            self.wrapped = wrapped
        }

        /// The host name did not resolve.
        public static let hostNotFound = Self(.hostNotFound)
        /// Nothing listens on the port (every address refused).
        public static let connectionRefused = Self(.connectionRefused)
        /// Connecting took longer than the connect timeout.
        public static let connectTimeout = Self(.connectTimeout)
        /// The network or host is unreachable.
        public static let networkUnreachable = Self(.networkUnreachable)
        /// The HTTP proxy did not open a tunnel to the server: it refused `CONNECT` (407, 403,
        /// 5xx…), answered something that is not HTTP, or did not answer in time. The message
        /// holds what the proxy said.
        public static let proxyFailed = Self(.proxyFailed)
        /// An address that cannot be used (a unix socket path too long, a malformed IP literal).
        public static let invalidAddress = Self(.invalidAddress)
        /// The server's certificate does not chain to a trusted root.
        public static let untrustedCertificate = Self(.untrustedCertificate)
        /// The certificate is not valid for the server's name or address.
        public static let hostnameMismatch = Self(.hostnameMismatch)
        /// The certificate has expired or is not yet valid.
        public static let certificateExpired = Self(.certificateExpired)
        /// The server did not agree to HTTP/2 (ALPN `h2`), or does not speak it.
        public static let http2NotSupported = Self(.http2NotSupported)
        /// Another TLS handshake failure.
        public static let tlsHandshakeFailed = Self(.tlsHandshakeFailed)
        /// The channel's TLS material (PEM certificates or key) is unusable.
        public static let invalidTLSConfiguration = Self(.invalidTLSConfiguration)
        /// The connection ended (closed by the server, reset, or shut down by the client).
        public static let connectionClosed = Self(.connectionClosed)
        /// The server sent GOAWAY without processing the call.
        public static let goaway = Self(.goaway)
        /// The server reset the call's stream (RST_STREAM); ``TransportError/http2ErrorCode``
        /// holds the HTTP/2 error code it sent.
        public static let streamReset = Self(.streamReset)
        /// The server stopped answering keepalive PINGs.
        public static let keepaliveTimeout = Self(.keepaliveTimeout)
        /// The response (its message, or a header block) was larger than the limit allowed.
        public static let responseTooLarge = Self(.responseTooLarge)
        /// The request's headers were larger than the server accepts.
        public static let headersTooLarge = Self(.headersTooLarge)
        /// The server broke the HTTP/2 protocol.
        public static let protocolViolation = Self(.protocolViolation)
        /// Another socket error.
        public static let other = Self(.other)

        /// The kind's name, as written after the dot: `hostNotFound`, `streamReset`, ...
        public var description: String { String(describing: wrapped) }
    }

    /// The kind of failure.
    public var kind: Kind
    /// What happened, for people: it names the cause and the address.
    public var message: String
    /// The HTTP/2 error code the server sent with RST_STREAM (`0x7` is `REFUSED_STREAM`, ...),
    /// for ``Kind/streamReset``; `nil` for the other kinds.
    public var http2ErrorCode: UInt32?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - kind: The kind of failure.
    ///   - message: What happened, for people.
    ///   - http2ErrorCode: The HTTP/2 error code of a ``Kind/streamReset``.
    public init(kind: Kind, message: String, http2ErrorCode: UInt32? = nil) {
        self.kind = kind
        self.message = message
        self.http2ErrorCode = http2ErrorCode
    }

    /// The ``message``.
    public var description: String { message }

    /// The public view of a transport failure.
    package init(_ error: TransportFailure) {
        message = error.description
        switch error {
        case .resolutionFailed:
            kind = .hostNotFound
        case .proxyFailed:
            kind = .proxyFailed
        case .invalidAddress:
            kind = .invalidAddress
        case .invalidRequest:
            kind = .other
        case .connectFailed(_, _, let reason):
            switch reason {
            case .refused: kind = .connectionRefused
            case .timedOut: kind = .connectTimeout
            case .unreachable: kind = .networkUnreachable
            case .notHTTP2: kind = .http2NotSupported
            case .abandoned: kind = .connectionClosed
            case .protocolViolation: kind = .protocolViolation
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
            kind = .streamReset
            http2ErrorCode = code
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
