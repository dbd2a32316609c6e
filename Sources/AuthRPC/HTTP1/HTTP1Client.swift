import HTTP2Client

/// HTTP/1.1 requests over the package's own transport: the sockets (Happy Eyeballs), the HTTP
/// CONNECT proxy code and the TLS (OpenSSL, the same trust settings and hostname verification)
/// that channels use. For the requests that are not gRPC: OAuth token, device, revocation and
/// discovery endpoints, IAM, STS, the metadata server. OAuth2 reaches it with `package` access.
///
/// One request per connection (`Connection: close`), no redirect followed, every part of the
/// answer bounded (status line, 100 header fields and 64 KiB of them, the body limit the request
/// gives, chunk-size lines), chunked and `Content-Length` bodies, and one deadline for the whole
/// exchange that a trickling server cannot stretch.
package final class HTTP1Client: Sendable {
    private let context: TLSContext
    private let proxy: ProxySettings

    /// Prepares TLS (loading the roots once) and reads the proxy settings.
    ///
    /// - Throws: `invalidArgument` for TLS material OpenSSL cannot use, for
    ///   `serverHostnameOverride` (which names one server; this client talks to many), and for
    ///   proxy settings that cannot be used (naming the variable).
    package init(
        tls: TLSConfiguration,
        proxy: ProxyConfiguration,
        environment: (String) -> String? = ProxySettings.processEnvironment
    ) throws(RPCError) {
        guard tls.serverHostnameOverride == nil else {
            throw RPCError(
                code: .invalidArgument,
                message: "serverHostnameOverride names one server; an HTTP client for many endpoints cannot use it"
            )
        }
        var configuration = tls.clientConfiguration
        configuration.applicationProtocol = .http1
        do throws(HTTP2Error) {
            context = try TLSContext(configuration)
        } catch {
            throw RPCError(
                code: .invalidArgument,
                message: "unusable TLS configuration: \(error)",
                cause: TransportError(error)
            )
        }
        self.proxy = try ProxySettings(proxy, environment: environment)
    }

    /// The proxy in use, without credentials, or `direct`.
    package var proxyDescription: String { proxy.description }

    /// One request.
    package struct Request: Sendable {
        /// `https` (TLS) or `http`.
        package var scheme: String
        package var method: String
        /// The host (a name or IP literal; IPv6 without brackets) and port.
        package var host: String
        package var port: Int
        /// The path and query, percent-encoded.
        package var path: String
        package var headers: [(name: String, value: String)]
        package var body: [UInt8]?
        /// How long the whole exchange may take.
        package var timeout: Duration
        package var maximumResponseBodyBytes: Int
        /// False for a server that must never be reached through a proxy (the metadata server).
        package var mayUseProxy: Bool

        package init(
            scheme: String,
            method: String,
            host: String,
            port: Int,
            path: String,
            headers: [(name: String, value: String)],
            body: [UInt8]?,
            timeout: Duration,
            maximumResponseBodyBytes: Int,
            mayUseProxy: Bool = true
        ) {
            self.scheme = scheme
            self.method = method
            self.host = host
            self.port = port
            self.path = path
            self.headers = headers
            self.body = body
            self.timeout = timeout
            self.maximumResponseBodyBytes = maximumResponseBodyBytes
            self.mayUseProxy = mayUseProxy
        }
    }

    /// A complete answer, whatever its status.
    package struct Response: Sendable {
        package var status: Int
        /// The header fields in order, names as sent.
        package var headers: [(name: String, value: String)]
        package var body: [UInt8]
    }

    /// Why no complete answer came.
    package enum Failure: Error, Sendable {
        /// The whole answer did not come within the request's timeout.
        case timedOut
        /// The body (announced, or as read) is larger than the request's limit.
        case responseTooLarge(limit: Int)
        /// The task was cancelled.
        case cancelled
        /// The request cannot be sent as asked (a scheme other than http and https, a header
        /// with a line break); nothing was sent.
        case invalidRequest(String)
        /// Connecting, the proxy, TLS, or the server's bytes failed; the message says how.
        case transport(TransportError)
    }

    /// Whether a request to `host` at `port` would go through the proxy.
    package func usesProxy(host: String, port: Int) -> Bool {
        proxy.usesProxy(host: host, port: port)
    }

    /// Sends `request` and returns the answer, whatever its status.
    package func send(_ request: Request) async throws(Failure) -> Response {
        let secure: Bool
        switch request.scheme.lowercased() {
        case "https": secure = true
        case "http": secure = false
        default: throw .invalidRequest("the scheme '\(request.scheme.prefix(20))' is neither https nor http")
        }
        guard (1...65535).contains(request.port) else {
            throw .invalidRequest("the port \(request.port) is out of range")
        }
        let target = HTTP2Target(host: request.host, port: request.port)
        let route: HTTP2Route = request.mayUseProxy ? proxy.route(to: target) : .resolving(target)
        let exchange = HTTP1Request(
            method: request.method,
            path: request.path,
            target: target,
            headers: request.headers,
            body: request.body,
            deadline: .now + request.timeout,
            maximumResponseBodyBytes: request.maximumResponseBodyBytes
        )
        do throws(HTTP2Error) {
            let response = try await HTTP1Exchange.send(
                exchange,
                via: route,
                tls: secure ? context : nil,
                serverName: request.host
            )
            return Response(status: response.status, headers: response.headers, body: response.body)
        } catch {
            switch error {
            case .deadlineExceeded: throw .timedOut
            case .cancelled: throw .cancelled
            case .responseBodyTooLarge(let limit): throw .responseTooLarge(limit: limit)
            case .invalidRequest(let reason): throw .invalidRequest(reason)
            // The HTTP/2 wording of these does not fit an HTTP/1.1 answer.
            case .responseHeaderListTooLarge(let limit):
                throw .transport(
                    TransportError(
                        kind: .responseTooLarge,
                        message: "the response's header is larger than \(limit) bytes"
                    )
                )
            case .protocolError(let reason):
                throw .transport(
                    TransportError(kind: .protocolViolation, message: "malformed HTTP/1.1 response: \(reason)")
                )
            default: throw .transport(TransportError(error))
            }
        }
    }
}
