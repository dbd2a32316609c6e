import HTTP2Client
public import Logging

/// A client's view of one gRPC server: one HTTP/2 connection (made on the first call, replaced
/// when it ends) carrying any number of concurrent unary calls.
///
/// ```swift
/// let channel = try Channel(target: "grpc-test.sandbox.googleapis.com:443")
/// var options = channel.defaultCallOptions
/// options.oauth2AccessToken = token
/// let response = try await channel.unary(method, request: request, responseType: Response.self, options: options)
/// print(response.message, response.headers, response.trailers)
/// ```
public final class Channel: Sendable {
    /// The server, as `host:port`.
    public let target: String
    /// How connections are protected.
    public let transportSecurity: TransportSecurity
    /// Whether connections go through an HTTP CONNECT proxy (as the channel was made with).
    public let proxy: ProxyConfiguration
    /// The options a call uses when it passes none.
    public let defaultCallOptions: CallOptions
    /// Runs tasks on the thread of this channel's connection, so calls made from them are
    /// answered without a thread switch: pass it to `withTaskExecutorPreference(_:operation:)`.
    /// See ``ChannelExecutor`` for what may run there.
    public let executor = ChannelExecutor()
    /// The interceptors every call runs through, before the call's own
    /// (``CallOptions/interceptors``); the first is outermost. See ``ClientInterceptor`` for where
    /// they sit in a call.
    public let interceptors: [any ClientInterceptor]
    /// Per-method defaults for calls (timeouts, retry policies, message limits) and the retry
    /// throttling of this channel; see ``ServiceConfig``. A call's own options win over it.
    public let serviceConfig: ServiceConfig?

    let connections: ConnectionManager
    let scheme: String
    let defaultAuthority: String
    /// The name the server's certificate is verified for (TLS only): a call with another
    /// authority must name a host the certificate also covers.
    let verifiedName: String?
    /// The retry token count, when the service config throttles retries.
    let retryThrottle: RetryThrottle?
    /// `:method POST` and `:scheme`: how every request's header block starts.
    let requestLine: HTTP2HeaderBlock
    let logger: Logger

    /// The library's user agent: `grpc-swift-authrpc/<version>`.
    public static let userAgent = "grpc-swift-authrpc/\(libraryVersion)"

    /// The default for `maxResponseHeaderListSize`: 16 KiB, gRPC C-core's hard metadata limit
    /// (`grpc.absolute_max_metadata_size`).
    public static let defaultMaxResponseHeaderListSize = 16 << 10

    /// Creates a channel to `target` (`host:port`, `[ipv6]:port`, or a host for port 443).
    ///
    /// Nothing is connected until the first call. Throws `invalidArgument` for a target that does
    /// not parse, for TLS material (PEM) that OpenSSL cannot use, for proxy settings (given, or
    /// from the environment) that cannot be used, and for the other arguments outside the
    /// ranges given below.
    ///
    /// - Parameters:
    ///   - target: `host:port`, `[ipv6]:port`, or a host (port 443).
    ///   - transportSecurity: TLS (the default, verifying against the system's roots) or plaintext.
    ///   - defaultCallOptions: The options of calls that pass none.
    ///   - keepalive: PINGs that detect a dead connection while calls wait; off by default. Its
    ///     interval and timeout must be longer than zero.
    ///   - maxResponseHeaderListSize: The largest response header block (the headers, the
    ///     trailers, or a 1xx block) a call accepts, counted as HTTP/2 does: name + value + 32
    ///     bytes per field (RFC 9113 section 6.5.2). It is announced to the server in
    ///     SETTINGS_MAX_HEADER_LIST_SIZE; a larger block resets the stream and fails the call with
    ///     `resourceExhausted` without being decoded whole. 16 KiB by default
    ///     (``defaultMaxResponseHeaderListSize``), as in gRPC C-core; at most `UInt32.max`.
    ///   - connectionBackoff: The waits between failed connection attempts; gRPC's by default.
    ///     Its durations must be longer than zero, `initial` at most `maximum`, `multiplier` at
    ///     least 1 and `jitter` from 0 to 1.
    ///   - logger: Where connection events are logged (never credentials).
    ///   - proxy: Whether connections go through an HTTP CONNECT proxy: by default the one the
    ///     environment names (`grpc_proxy`, `https_proxy`, `http_proxy`, with `no_grpc_proxy` or
    ///     `no_proxy`), as in gRPC C-core; see ``ProxyConfiguration``. Through a proxy, TLS runs
    ///     end to end with the target, and the proxy resolves the target's name.
    ///   - interceptors: Run around every call, the first outermost, before the call's own; none
    ///     by default.
    ///   - serviceConfig: Per-method call defaults and retry throttling (gRPC's service config,
    ///     for instance loaded with ``ServiceConfig/init(json:)``); none by default.
    public init(
        target: String,
        transportSecurity: TransportSecurity = .tls(),
        defaultCallOptions: CallOptions = CallOptions(),
        keepalive: Keepalive? = nil,
        maxResponseHeaderListSize: Int = Channel.defaultMaxResponseHeaderListSize,
        connectionBackoff: ConnectionBackoff = .default,
        logger: Logger = Logger(label: "swift-authrpc"),
        proxy: ProxyConfiguration = .environment,
        interceptors: [any ClientInterceptor] = [],
        serviceConfig: ServiceConfig? = nil
    ) throws(RPCError) {
        let parsed = try HTTP2Target(parsing: target)
        let proxySettings = try ProxySettings(proxy)
        guard let headerListLimit = UInt32(exactly: maxResponseHeaderListSize), headerListLimit > 0 else {
            throw RPCError(
                code: .invalidArgument,
                message:
                    "maxResponseHeaderListSize must be from 1 to \(UInt32.max) bytes, not \(maxResponseHeaderListSize)"
            )
        }
        if let problem = connectionBackoff.problem {
            throw RPCError(code: .invalidArgument, message: "invalid connectionBackoff: \(problem)")
        }
        var configuration = HTTP2ConnectionConfiguration()
        configuration.maxHeaderListSize = headerListLimit
        if let keepalive {
            guard keepalive.interval > .zero, keepalive.timeout > .zero else {
                throw RPCError(
                    code: .invalidArgument,
                    message:
                        "keepalive interval and timeout must be longer than zero (they are \(keepalive.interval) and \(keepalive.timeout))"
                )
            }
            // As with call timeouts, anything longer than 99,999,999 hours counts as that.
            configuration.keepaliveInterval = min(keepalive.interval, CallOptions.longestTimeout)
            configuration.keepaliveTimeout = min(keepalive.timeout, CallOptions.longestTimeout)
        }
        var authority = parsed.description
        switch transportSecurity.wrapped {
        case .plaintext:
            scheme = "http"
            verifiedName = nil
        case .tls(let tls):
            scheme = "https"
            verifiedName = tls.serverHostnameOverride ?? parsed.host
            do throws(HTTP2Error) {
                configuration.tls = try TLSContext(tls.clientConfiguration)
            } catch {
                throw RPCError(
                    code: .invalidArgument,
                    message: "unusable TLS configuration: \(error)",
                    cause: TransportError(error)
                )
            }
            if let name = tls.serverHostnameOverride {
                if let problem = Authority.hostProblem(in: name) {
                    throw RPCError(
                        code: .invalidArgument,
                        message: "invalid serverHostnameOverride (expected a host name or IP address): \(problem)"
                    )
                }
                configuration.tlsServerNameOverride = name
                authority = name.contains(":") ? "[\(name)]" : name
            }
        }
        self.target = parsed.description
        self.transportSecurity = transportSecurity
        self.proxy = proxy
        self.defaultCallOptions = defaultCallOptions
        self.defaultAuthority = authority
        var requestLine = HTTP2HeaderBlock()
        requestLine.append(name: ":method", value: "POST")
        requestLine.append(name: ":scheme", value: scheme)
        self.requestLine = requestLine
        self.logger = logger
        self.interceptors = interceptors
        self.serviceConfig = serviceConfig
        self.retryThrottle = serviceConfig?.retryThrottling.map(RetryThrottle.init)
        self.connections = ConnectionManager(
            target: parsed,
            route: proxySettings.route(to: parsed),
            configuration: configuration,
            backoff: connectionBackoff,
            executor: executor,
            logger: logger
        )
    }

    /// Stops taking calls: calls in flight finish, then the connection closes. Calls made after
    /// this fail with `unavailable`.
    public func close() {
        connections.close()
    }

    deinit {
        connections.close()
    }
}

extension TLSConfiguration {
    var clientConfiguration: TLSClientConfiguration {
        var configuration = TLSClientConfiguration()
        switch trustRoots.wrapped {
        case .system:
            configuration.trustsSystemRoots = true
        case .certificates(let pem):
            configuration.trustsSystemRoots = false
            configuration.additionalTrustRootsPEM = [pem]
        case .systemAndCertificates(let pem):
            configuration.trustsSystemRoots = true
            configuration.additionalTrustRootsPEM = [pem]
        }
        configuration.certificateChainPEM = clientCertificateChainPEM
        configuration.privateKeyPEM = clientPrivateKeyPEM
        configuration.minimumVersion = minimumVersion == .tls13 ? .tls13 : .tls12
        return configuration
    }
}
