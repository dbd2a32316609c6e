import AuthRPCTransport
public import Logging

/// A client's view of one gRPC service: the addresses its target names, HTTP/2 connections to
/// them (made when calls need them, replaced when they end) and the calls they carry.
///
/// The target is looked up when the first call comes and again as the channel runs (after a
/// connection ends or gets GOAWAY, after a failed attempt, and every 30 seconds while in use).
/// With ``LoadBalancingPolicy/pickFirst`` (the default) one connection, to the first address
/// that answers, carries every call; with ``LoadBalancingPolicy/roundRobin`` every address has
/// its own connection and calls take the ready ones in turn. A connection unused for the idle
/// timeout closes. ``connectivityStates`` reports where the channel stands.
///
/// ```swift
/// let channel = try Channel(target: "grpc-test.sandbox.googleapis.com:443")
/// var options = channel.defaultCallOptions
/// options.oauth2AccessToken = token
/// let response = try await channel.unary(method, request: request, responseType: Response.self, options: options)
/// print(response.message, response.headers, response.trailers)
/// ```
public final class Channel: Sendable {
    /// The target: `host:port` for a name (also when written `dns:///host:port` or without a
    /// port), else as written (`ipv4:`, `ipv6:`, `unix:`, `unix-abstract:`).
    public let target: String
    /// How connections are protected.
    public let transportSecurity: TransportSecurity
    /// Whether connections go through an HTTP CONNECT proxy (as the channel was made with).
    public let proxy: ProxyConfiguration
    /// The options a call uses when it passes none.
    public let defaultCallOptions: CallOptions
    /// Runs tasks on the thread of this channel's connection (of one of them, with round-robin),
    /// so calls made from them are answered without a thread switch: pass it to
    /// `withTaskExecutorPreference(_:operation:)`. See ``ChannelExecutor`` for what may run there.
    public let executor = ChannelExecutor()
    /// The interceptors every call runs through, before the call's own
    /// (``CallOptions/interceptors``); the first is outermost. See ``ClientInterceptor`` for where
    /// they sit in a call.
    public let interceptors: [any ClientInterceptor]
    /// Per-method defaults for calls (timeouts, retry policies, message limits) and the retry
    /// throttling of this channel; see ``ServiceConfig``. A call's own options win over it.
    public let serviceConfig: ServiceConfig?

    let connections: ConnectionManager
    /// The connections of the groups a per-call router sends calls to (an `xds:///` target whose
    /// routes name several clusters); nil when every call goes to ``connections``.
    let routing: CallRouting?
    /// A registered scheme's resolver (`xds`): what it runs of its own (the control plane's
    /// connection) ends with the channel.
    let resolver: (any ChannelResolver)?
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

    /// The default idle timeout: 30 minutes, as gRPC's `grpc.client_idle_timeout_ms`.
    public static let defaultIdleTimeout = Duration.seconds(30 * 60)

    /// How often a name in use is looked up again (gRPC C-core's
    /// `grpc.dns_min_time_between_resolutions_ms`).
    static let defaultResolutionInterval = Duration.seconds(30)

    /// Creates a channel to `target`, named as in gRPC (doc/naming.md).
    ///
    /// Nothing is looked up or connected until the first call. Throws `invalidArgument`, naming
    /// what is wrong, for a target that does not parse (an unknown scheme, a DNS server in the
    /// authority, an address that is not one, an empty address list, a unix socket path longer
    /// than the system's `sun_path`), for TLS material (PEM) that OpenSSL cannot use, for proxy
    /// settings (given, or from the environment) that cannot be used, and for the other
    /// arguments outside the ranges given below.
    ///
    /// - Parameters:
    ///   - target: One of
    ///     - `host:port`, `[ipv6]:port` or `host` (port 443), the same as `dns:///host:port`
    ///       (or `dns:host:port`): a name looked up with the system's resolver (DNS, the hosts
    ///       file), and looked up again as the channel runs;
    ///     - `ipv4:addr[:port][,addr[:port],...]` or `ipv6:addr` / `ipv6:[addr]:port,...`:
    ///       fixed addresses (port 443 when none is given); the first is the default
    ///       `:authority` and the name TLS verifies;
    ///     - `unix:path` (relative or absolute), `unix:///absolute/path`, or (Linux)
    ///       `unix-abstract:name`: a unix-domain socket; the `:authority` is `localhost`.
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
    ///     end to end with the target, and the proxy resolves the target's name: the channel
    ///     then has one endpoint, `CONNECT host:port`, under either policy. An `ipv4:`/`ipv6:`
    ///     address goes through the proxy unless `no_proxy` names it, each its own tunnel
    ///     (`CONNECT addr:port`). Unix sockets and this machine's addresses never do.
    ///   - interceptors: Run around every call, the first outermost, before the call's own; none
    ///     by default.
    ///   - serviceConfig: Per-method call defaults and retry throttling (gRPC's service config,
    ///     for instance loaded with ``ServiceConfig/init(json:)``); none by default.
    ///   - loadBalancing: How calls spread over the target's addresses: ``LoadBalancingPolicy/pickFirst``
    ///     (the default) or ``LoadBalancingPolicy/roundRobin``. Each attempt of a call (a retry
    ///     too) takes the policy's next pick, so a retry may go to another address.
    ///   - idleTimeout: A connection with no call for this long closes, and a channel with no
    ///     connection and no call for this long stops reconnecting: it becomes
    ///     ``ConnectivityState/idle`` and the next call looks the target up and connects again.
    ///     30 minutes by default (``defaultIdleTimeout``), as in gRPC; `nil` never idles. It must
    ///     be longer than zero.
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
        serviceConfig: ServiceConfig? = nil,
        loadBalancing: LoadBalancingPolicy = .pickFirst,
        idleTimeout: Duration? = Channel.defaultIdleTimeout
    ) throws(RPCError) {
        let parsed = try ChannelTarget(parsing: target)
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
        if let idleTimeout, idleTimeout <= .zero {
            throw RPCError(
                code: .invalidArgument,
                message: "idleTimeout must be longer than zero (it is \(idleTimeout))"
            )
        }
        var configuration = HTTP2ConnectionConfiguration()
        configuration.maxHeaderListSize = headerListLimit
        configuration.idleTimeout = idleTimeout.map { min($0, CallOptions.longestTimeout) }
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
        var authority = parsed.authority
        switch transportSecurity.wrapped {
        case .plaintext:
            scheme = "http"
            verifiedName = nil
        case .tls(let tls):
            scheme = "https"
            verifiedName = tls.serverHostnameOverride ?? parsed.serverName
            do throws(TransportFailure) {
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
        let machine = ChannelStateMachine<HTTP2Connection>.Configuration(
            // A registered scheme's resolver gives a set of equals (xDS: one cluster's endpoints).
            loadBalancing: parsed.isResolvedByRegisteredScheme ? .roundRobin : loadBalancing,
            backoff: connectionBackoff,
            resolutionInterval: Self.defaultResolutionInterval,
            idleTimeout: configuration.idleTimeout
        )
        self.connections = ConnectionManager(
            target: parsed,
            endpoints: parsed.endpoints(through: proxySettings),
            serverName: parsed.serverName,
            configuration: configuration,
            machine: machine,
            executor: executor,
            logger: logger
        )
        self.resolver = parsed.registeredResolver
        if let router = resolver?.callRouter {
            let executor = self.executor
            let configuration = configuration
            self.routing = CallRouting(router: router) { group, groupResolver in
                ConnectionManager(
                    target: parsed.group(group, resolvedBy: groupResolver),
                    endpoints: nil,
                    serverName: parsed.serverName,
                    configuration: configuration,
                    machine: machine,
                    executor: executor,
                    logger: logger
                )
            }
        } else {
            self.routing = nil
        }
    }

    /// Where the channel stands now.
    ///
    /// On an `xds:///` channel whose routes name several clusters, this is the state of the
    /// first cluster's connections (the others have connections of their own).
    public var connectivityState: ConnectivityState {
        connections.state
    }

    /// The channel's state now, then every change, ending after ``ConnectivityState/shutdown``.
    /// Each use is a new sequence; a consumer that falls behind still sees every state, in order.
    ///
    /// ```swift
    /// for await state in channel.connectivityStates {
    ///     print("channel is \(state)")
    /// }
    /// ```
    public var connectivityStates: AsyncStream<ConnectivityState> {
        connections.states()
    }

    /// How many of the channel's connections, made or being made, have not ended yet.
    package var openConnectionCount: Int {
        connections.openConnectionCount + (routing?.openConnectionCount ?? 0) + (resolver?.openConnectionCount ?? 0)
    }

    /// The groups (xDS clusters other than the first its routes name) whose connections the
    /// channel holds now, by name.
    package var routedGroupNames: [String] {
        routing?.groupNames ?? []
    }

    /// Looks a name up again after `interval` rather than gRPC's 30 seconds (tests shorten it).
    package func setResolutionInterval(_ interval: Duration) {
        connections.setResolutionInterval(interval)
    }

    /// Stops taking calls: calls in flight finish, then the connections close. Calls made after
    /// this fail with `unavailable`; ``connectivityStates`` ends with
    /// ``ConnectivityState/shutdown``. An `xds:///` channel's stream to its control plane stays
    /// up, serving the calls in flight, until ``shutdown()`` or the channel's release.
    public func close() {
        connections.close()
        routing?.close()
    }

    /// Closes the channel as ``close()`` does, then returns once its connections have ended: calls
    /// in flight finished, each connection's last frames (GOAWAY) and TLS close_notify sent, its
    /// socket closed and its I/O thread done with OpenSSL. On an `xds:///` channel the stream to
    /// the control plane and its connection end after the calls, and are waited for too.
    ///
    /// A program calls this before it exits: one that exits right after ``close()`` cuts its
    /// connections off mid-frame, without GOAWAY or close_notify, and calls in flight never
    /// finish. (OpenSSL's own clean-up at exit is off when this library initialised OpenSSL
    /// first, so such an exit does not also race the connections' threads.) An attempt to
    /// connect that is under way is abandoned; the wait lasts as long as the calls in flight
    /// (each bounded by its deadline). When the waiting task is cancelled the connections close
    /// at once instead: calls still in flight fail with `unavailable`, and it returns once the
    /// threads have ended. Calling it again, or after ``close()``, only waits.
    ///
    /// ```swift
    /// let channel = try Channel(target: "pubsub.googleapis.com")
    /// do {
    ///     try await work(channel)
    /// } catch {
    ///     await channel.shutdown()
    ///     throw error
    /// }
    /// await channel.shutdown()
    /// ```
    public func shutdown() async {
        await connections.shutdown()
        await routing?.shutdown()
        // Last: the calls just waited for may have needed the resolver's answers.
        await resolver?.shutdown()
    }

    deinit {
        connections.close()
        routing?.close()
        resolver?.close()
    }
}
