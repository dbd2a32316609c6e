public import AuthRPC
import AuthRPCTransport
import Foundation

/// Sends OAuth requests (token, device authorization, revocation, discovery, IAM, STS, the
/// metadata server) with the package's own HTTP/1.1 client, on the sockets, TLS and HTTP CONNECT
/// proxy code that channels use: the default transport everywhere the library picks one.
///
/// - **Trust**: `tls` says which roots a server's certificate must lead to, as for a channel:
///   the system's (OpenSSL's default locations, which `SSL_CERT_FILE` and `SSL_CERT_DIR`
///   replace, as for every OpenSSL-based tool), an explicit CA (PEM), or both. The server's name
///   is always verified (SNI and the certificate's names), TLS 1.2 at least; a client certificate
///   in `tls` is presented (mutual TLS). `serverHostnameOverride` is refused: this transport
///   talks to many servers.
/// - **Proxy**: `proxy` is read as a channel reads it (``/AuthRPC/ProxyConfiguration``: by default
///   `grpc_proxy`, `https_proxy`, `http_proxy`, with `no_grpc_proxy` or `no_proxy`). Requests go
///   through the proxy in a CONNECT tunnel, TLS end to end with the server, so the proxy sees the
///   server's name and port, never a token, a secret or a path. A plain `http` request that the
///   settings would send through a proxy is refused before anything is sent
///   (``OAuthError/Kind/invalidConfiguration``): the proxy could read every byte of it, in a
///   tunnel or as an absolute-form request alike. The library sends plain http only to this
///   machine and to metadata servers, and neither is ever proxied.
/// - **Never proxied**: this machine (`localhost`, `127.0.0.0/8`, `::1`) and the metadata servers
///   the library names for a request (GoogleAuth names Compute Engine's
///   and AWS's), which are only reachable from the machine itself.
/// - **Limits**: one request per connection (`Connection: close`); redirects are never followed
///   (the 3xx answer is returned); the answer's status line, header fields (at most 100, 64 KiB
///   in all) and body (``OAuthHTTPRequest/maximumResponseBodySize``, an announced larger
///   `Content-Length` failing before any body byte is read) are bounded; chunked and
///   `Content-Length` bodies are read; the whole exchange, connecting included, must end within
///   ``OAuthHTTPRequest/timeout``, however slowly the server sends.
///
/// Each exchange runs on a thread of its own (the transport holds no connection between
/// requests); cancelling the calling task ends it at once. The trust roots are loaded once, when
/// the transport is made: make one and reuse it.
public struct HTTP1OAuthTransport: OAuthTransport {
    /// What the transport trusts and presents.
    public let tls: TLSConfiguration
    /// Whether, and through which proxy, requests go.
    public let proxy: ProxyConfiguration

    private let client: Client?
    private let configurationError: OAuthError?

    /// A transport trusting `tls`'s roots and going through `proxy`.
    ///
    /// - Throws: ``OAuthError/Kind/invalidConfiguration`` for TLS material OpenSSL cannot use,
    ///   a `serverHostnameOverride`, or proxy settings (given, or from the environment) that
    ///   cannot be used, naming what is wrong.
    public init(
        tls: TLSConfiguration = TLSConfiguration(),
        proxy: ProxyConfiguration = .environment
    ) throws(OAuthError) {
        self.init(tls: tls, proxy: proxy, environment: Self.processEnvironment)
        if let configurationError { throw configurationError }
    }

    /// A transport reading the proxy variables from `environment`; configuration errors are kept
    /// for ``send(_:)`` (for tests).
    init(tls: TLSConfiguration, proxy: ProxyConfiguration, environment: @escaping (String) -> String?) {
        self.tls = tls
        self.proxy = proxy
        do throws(RPCError) {
            client = try Client(tls: tls, proxy: proxy, environment: environment)
            configurationError = nil
        } catch {
            client = nil
            configurationError = OAuthError(
                .invalidConfiguration,
                "the OAuth transport cannot be set up: \(error.message)",
                underlying: error
            )
        }
    }

    private static let processEnvironment: @Sendable (String) -> String? = { name in
        ProcessInfo.processInfo.environment[name]
    }

    /// The transport the library uses when it is given none: the system's roots (honouring
    /// `SSL_CERT_FILE` and `SSL_CERT_DIR`) and the environment's proxy, read once. When the
    /// environment's proxy settings cannot be used, every request fails with
    /// ``OAuthError/Kind/invalidConfiguration`` naming the variable, rather than going around
    /// the proxy.
    public static var standard: HTTP1OAuthTransport { shared }

    private static let shared = HTTP1OAuthTransport(
        tls: TLSConfiguration(),
        proxy: .environment,
        environment: processEnvironment
    )

    /// Sends `request` on a connection of its own and returns the server's answer, whatever its
    /// status (a 3xx included: redirects are not followed).
    ///
    /// - Throws: ``OAuthTransportError/timedOut(_:)`` when the whole answer did not come within
    ///   the request's timeout; ``OAuthTransportError/responseTooLarge(limit:)`` past its body
    ///   limit; `CancellationError` when the task is cancelled; AuthRPC's `TransportError` when
    ///   connecting, the proxy, TLS or the server's bytes failed (its `kind` says which);
    ///   ``OAuthError/Kind/invalidConfiguration`` when the transport's settings cannot be used or
    ///   the request cannot go as asked (a plain-http request its proxy settings would send through
    ///   a proxy, a header value with a line break).
    public func send(_ request: OAuthHTTPRequest) async throws -> OAuthHTTPResponse {
        guard let client else { throw configurationError! }
        guard let components = URLComponents(url: request.url, resolvingAgainstBaseURL: false),
            let scheme = components.scheme?.lowercased(),
            let rawHost = components.host, !rawHost.isEmpty
        else {
            throw OAuthError(.invalidConfiguration, "cannot send a request to \(request.url.redacted): no host")
        }
        let host = rawHost.hasPrefix("[") && rawHost.hasSuffix("]") ? String(rawHost.dropFirst().dropLast()) : rawHost
        let port = components.port ?? (scheme == "http" ? 80 : 443)
        var path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { path += "?" + query }
        let mayUseProxy = !request.plaintext.neverProxies(host: host)
        if scheme == "http", mayUseProxy, client.proxy.usesProxy(host: host, port: port) {
            throw OAuthError(
                .invalidConfiguration,
                "refusing to send the plain-http request to \(request.url.redacted) through the proxy \(client.proxy.description), which could read it: use https, or name the host in no_proxy"
            )
        }
        var headers = request.headers
        if !headers.contains(where: { $0.name.lowercased() == "user-agent" }) {
            headers.append(("User-Agent", Self.userAgent))
        }
        guard scheme == "https" || scheme == "http" else {
            throw OAuthError(
                .invalidConfiguration,
                "cannot send a request to \(request.url.redacted): the scheme '\(scheme.prefix(20))' is neither https nor http"
            )
        }
        guard (1...65535).contains(port) else {
            throw OAuthError(
                .invalidConfiguration,
                "cannot send a request to \(request.url.redacted): the port \(port) is out of range"
            )
        }
        let target = HostAndPort(host: host, port: port)
        let exchange = HTTP1Request(
            method: request.method,
            path: path,
            target: target,
            headers: headers,
            body: request.body.map { Array($0) },
            deadline: .now + request.timeout,
            maximumResponseBodyBytes: request.maximumResponseBodySize
        )
        let answer: HTTP1Response
        do throws(TransportFailure) {
            answer = try await HTTP1Exchange.send(
                exchange,
                via: mayUseProxy ? client.proxy.route(to: target) : .resolving(target),
                tls: scheme == "https" ? client.context : nil,
                serverName: host
            )
        } catch {
            throw Self.error(for: error, sending: request)
        }
        var fields: [String: String] = [:]
        for (name, value) in answer.headers {
            let key = name.lowercased()
            fields[key] = fields[key].map { "\($0), \(value)" } ?? value
        }
        return OAuthHTTPResponse(statusCode: answer.status, headers: fields, body: Data(answer.body))
    }

    /// What a caller sees of a failed exchange: the OAuth transport's own errors for the
    /// request's bounds, AuthRPC's `TransportError` for the connection.
    private static func error(for failure: TransportFailure, sending request: OAuthHTTPRequest) -> any Error {
        switch failure {
        case .deadlineExceeded:
            return OAuthTransportError.timedOut(request.timeout)
        case .cancelled:
            return CancellationError()
        case .responseBodyTooLarge(let limit):
            return OAuthTransportError.responseTooLarge(limit: limit)
        case .invalidRequest(let reason):
            return OAuthError(.invalidConfiguration, "cannot send a request to \(request.url.redacted): \(reason)")
        // The HTTP/2 wording of these does not fit an HTTP/1.1 answer.
        case .responseHeaderListTooLarge(let limit):
            return TransportError(
                kind: .responseTooLarge,
                message: "the response's header is larger than \(limit) bytes"
            )
        case .protocolError(let reason):
            return TransportError(kind: .protocolViolation, message: "malformed HTTP/1.1 response: \(reason)")
        default:
            return TransportError(failure)
        }
    }

    /// What the transport sends as `User-Agent` unless the request names one.
    static let userAgent = "swift-authrpc-oauth/0.1.0"

}

extension HTTP1OAuthTransport {
    /// The OpenSSL context (roots loaded once) and the proxy settings every request uses.
    private struct Client: Sendable {
        let context: TLSContext
        let proxy: ProxySettings

        /// - Throws: `invalidArgument` for TLS material OpenSSL cannot use, for a
        ///   `serverHostnameOverride` (which names one server; this transport talks to many), and
        ///   for proxy settings that cannot be used (naming the variable).
        init(tls: TLSConfiguration, proxy: ProxyConfiguration, environment: (String) -> String?) throws(RPCError) {
            guard tls.serverHostnameOverride == nil else {
                throw RPCError(
                    code: .invalidArgument,
                    message: "serverHostnameOverride names one server; an HTTP client for many endpoints cannot use it"
                )
            }
            var configuration = tls.clientConfiguration
            configuration.applicationProtocol = .http1
            do throws(TransportFailure) {
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
    }
}
