internal import AuthRPC
internal import AuthRPCTransport
internal import SwiftProtobuf

/// The live ADS stream: `StreamAggregatedResources` (state of the world, xDS v3) on the
/// transport's bidirectional stream, driving ``XDSADSState``.
///
/// One stream at a time to the bootstrap's first server; every response is answered with the
/// ACK or NACK the state makes of it. When the stream fails, the client connects again after a
/// backoff, and meanwhile keeps every resource it had: watchers go on being served from the cache
/// (gRFC A27). Subscriptions made while no stream is up go out with the next one. The
/// does-not-exist timers run only while a stream is up.
actor XDSADSClient {
    /// Where and how the client reaches the control plane.
    struct Settings: Sendable {
        var server: HostAndPort
        var node: Envoy_Config_Core_V3_Node
        var ignoresResourceDeletion: Bool
        var doesNotExistTimeout: Duration = XDSADSState.doesNotExistTimeout
        var backoff = XDSADSBackoff()
        /// With `tls` set, the stream goes over TLS (the server's name checked against its
        /// certificate); else in plaintext.
        var connection = HTTP2ConnectionConfiguration()
        /// Whose token each stream carries as `authorization: Bearer` (`google_default`: the
        /// Application Default Credentials); only ever sent over TLS.
        var callCredentials: (any AuthTokenProvider)?
        /// The stream's bounds: a response over ``XDSLimits/responseBytes`` resets the stream
        /// (the cache is kept and the client connects again).
        var limits = Settings.defaultLimits

        static var defaultLimits: HTTP2StreamLimits {
            var limits = HTTP2StreamLimits()
            limits.maxMessageBytes = XDSLimits.responseBytes
            return limits
        }
    }

    static let path = "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources"

    private let settings: Settings
    /// Told whenever a resource the client holds changes (updated, removed, known not to exist).
    nonisolated let changes = XDSChangeObservers()
    private var state: XDSADSState
    private var stream: HTTP2BidirectionalStream?
    private var runner: Task<Void, Never>?
    private var timer: Task<Void, Never>?
    /// Set by ``stop()``: no stream starts after it.
    private var stopped = false
    /// The connections to the control plane, so that ``shutdown()`` can wait for their threads.
    nonisolated let connections = HTTP2ConnectionGroup()
    /// How many streams have been started (a test sees the client come back).
    private(set) var streamsStarted = 0
    /// Why the last stream ended, if one has.
    private(set) var lastStreamFailure: String?

    init(settings: Settings) {
        self.settings = settings
        self.state = XDSADSState(
            node: settings.node,
            ignoresResourceDeletion: settings.ignoresResourceDeletion,
            doesNotExistTimeout: settings.doesNotExistTimeout
        )
    }

    /// Starts the stream (and keeps one up until ``stop()``).
    func start() {
        guard runner == nil, !stopped else { return }
        runner = Task { await self.run() }
    }

    /// Ends the stream for good; its connection closes on its own thread.
    func stop() {
        stopped = true
        runner?.cancel()
        runner = nil
        timer?.cancel()
        timer = nil
        stream?.cancel()
        stream = nil
    }

    /// ``stop()``, then returns once the connection to the control plane has ended: its last
    /// frames sent, its socket closed, its I/O thread done with OpenSSL.
    func shutdown() async {
        stop()
        await connections.closeAll()
    }

    /// Asks for `name` (nothing when already asked for).
    func subscribe(_ type: XDSResourceType, _ name: String) {
        guard let request = state.subscribe(type, name, now: .now) else { return }
        send(request)
    }

    /// Stops asking for `name`; the cache forgets it.
    func unsubscribe(_ type: XDSResourceType, _ name: String) {
        guard let request = state.unsubscribe(type, name) else { return }
        send(request)
    }

    /// Stops asking for what a channel's routes no longer need, in one request per type: every
    /// route configuration but `routeConfiguration` (all of them for routes held inline), every
    /// cluster not in `clusters`, and every endpoints resource none of the kept clusters names.
    func retainOnly(routeConfiguration: String?, clusters: Set<String>) {
        var endpointsInUse: Set<String> = []
        for cluster in clusters {
            if case .cluster(let found)? = entry(.cluster, cluster)?.resource {
                endpointsInUse.insert(found.endpointsName)
            }
        }
        let kept: [(XDSResourceType, (String) -> Bool)] = [
            (.routeConfiguration, { $0 == routeConfiguration }),
            (.cluster, { clusters.contains($0) }),
            (.endpoints, { endpointsInUse.contains($0) }),
        ]
        for (type, keeps) in kept {
            var last: Envoy_Service_Discovery_V3_DiscoveryRequest?
            for name in (state.types[type]?.names ?? []).sorted() where !keeps(name) {
                last = state.unsubscribe(type, name) ?? last
            }
            if let last { send(last) }
        }
    }

    /// What the client holds for `name`.
    func entry(_ type: XDSResourceType, _ name: String) -> XDSADSState.Entry? {
        state.types[type]?.entries[name]
    }

    /// The version last ACKed for `type`.
    func ackedVersion(_ type: XDSResourceType) -> String? {
        state.types[type]?.ackedVersion
    }

    /// The client's status for ``XDSScheme/clientStatus()``, under the channel's `target`.
    func status(target: String) -> XDSClientStatus {
        XDSClientStatus(
            target: target,
            server: settings.server.description,
            streamsStarted: streamsStarted,
            lastStreamFailure: lastStreamFailure,
            resources: state.resourceStatuses
        )
    }

    // MARK: - The stream

    private func run() async {
        var attempt = 0
        while !Task.isCancelled {
            let worked = await runStream()
            if Task.isCancelled { return }
            attempt = worked ? 0 : attempt + 1
            try? await Task.sleep(for: settings.backoff.delay(attempt: attempt))
        }
    }

    /// One stream, from connecting to its end; whether a response came on it (the backoff then
    /// starts over).
    private func runStream() async -> Bool {
        var sawResponse = false
        let connection: HTTP2Connection
        // Announced before `stopped` can change (no suspension between): `shutdown()` waits for it.
        guard !stopped else { return false }
        connections.expectConnection()
        do {
            connection = try await HTTP2Connection.connect(
                to: settings.server,
                configuration: settings.connection,
                group: connections
            )
        } catch {
            lastStreamFailure = "connecting to \(settings.server): \(error)"
            return false
        }
        defer { connection.close() }
        var headers = Self.headers(authority: settings.server.description, secure: settings.connection.tls != nil)
        var sentToken: String?
        if let credentials = settings.callCredentials {
            // A token goes only where TLS verified the server's name (the scheme refuses otherwise).
            guard settings.connection.tls != nil else {
                lastStreamFailure = "call credentials need TLS to the control plane"
                return false
            }
            do {
                let context = AuthTokenContext(authority: settings.server.description, method: Self.method)
                let token = try await credentials.token(for: context)
                headers.append(name: "authorization", value: "Bearer \(token)")
                sentToken = token
            } catch {
                lastStreamFailure = "the call credentials gave no token: \(error)"
                return false
            }
        }
        // Stopped while connecting or fetching the token: a stream opened now would hold the
        // connection's graceful close open for good.
        guard !stopped else { return false }
        let stream = connection.openStream(headers: headers, limits: settings.limits)
        self.stream = stream
        streamsStarted += 1
        defer {
            self.stream = nil
            timer?.cancel()
            timer = nil
        }
        for request in state.streamStarted(now: .now) { send(request) }
        armTimer()
        do throws(XDSADSFailure) {
            while let event = try await Self.next(stream) {
                switch event {
                case .headers(let status, let fields):
                    guard status == 200 else { throw XDSADSFailure("the control plane answered HTTP \(status)") }
                    // A trailers-only answer: the stream ends here.
                    if let grpcStatus = fields.first(where: { $0.name == "grpc-status" })?.value {
                        await refused(grpcStatus, token: sentToken)
                        throw XDSADSFailure("the control plane ended the stream (grpc-status \(grpcStatus))")
                    }
                case .message(let bytes):
                    let response: Envoy_Service_Discovery_V3_DiscoveryResponse
                    do {
                        response = try Envoy_Service_Discovery_V3_DiscoveryResponse(serializedBytes: bytes)
                    } catch {
                        throw XDSADSFailure("a DiscoveryResponse that does not decode: \(error)")
                    }
                    let answer: Envoy_Service_Discovery_V3_DiscoveryRequest?
                    let changed: Bool
                    do throws(XDSResourceError) {
                        let received = try state.receive(response)
                        answer = received.request
                        changed = received.changes.contains { !$0.isNACK }
                    } catch {
                        throw XDSADSFailure("a DiscoveryResponse out of bounds: \(error)")
                    }
                    sawResponse = true
                    if let answer { send(answer) }
                    armTimer()
                    // The resolvers read the cache again (a NACK leaves what they read as it was).
                    if changed { changes.notify() }
                case .trailers(let fields):
                    let status = fields.first { $0.name == "grpc-status" }?.value ?? "none"
                    await refused(status, token: sentToken)
                    throw XDSADSFailure("the control plane ended the stream (grpc-status \(status))")
                }
            }
        } catch {
            stream.cancel()
            lastStreamFailure = error.description
        }
        return sawResponse
    }

    /// A stream the control plane ended UNAUTHENTICATED: its token (revoked, say) is not used
    /// again, so the next stream carries a fresh one rather than the cached one until it expires.
    private func refused(_ grpcStatus: String, token: String?) async {
        guard grpcStatus == "16", let token,
            let credentials = settings.callCredentials as? any InvalidatableAuthTokenProvider
        else { return }
        await credentials.invalidate(token: token)
    }

    private static func next(_ stream: HTTP2BidirectionalStream) async throws(XDSADSFailure) -> HTTP2StreamEvent? {
        do {
            return try await stream.next()
        } catch {
            throw XDSADSFailure("the stream failed: \(error)")
        }
    }

    private func send(_ request: Envoy_Service_Discovery_V3_DiscoveryRequest) {
        guard let stream else { return }  // goes out with the next stream's first requests
        do {
            try stream.send(try request.serializedBytes())
        } catch {
            // The stream has failed: its reader sees why and starts another.
            stream.cancel()
        }
    }

    /// Runs the does-not-exist timer to the state's next deadline.
    private func armTimer() {
        timer?.cancel()
        guard let deadline = state.nextDeadline else {
            timer = nil
            return
        }
        timer = Task {
            try? await Task.sleep(until: deadline)
            guard !Task.isCancelled else { return }
            self.expire()
        }
    }

    private func expire() {
        guard stream != nil else { return }
        let expired = state.expire(now: .now)
        armTimer()
        if !expired.isEmpty { changes.notify() }
    }

    /// The ADS method, as call credentials see it.
    static let method = MethodDescriptor(
        service: "envoy.service.discovery.v3.AggregatedDiscoveryService",
        method: "StreamAggregatedResources"
    )

    static func headers(authority: String, secure: Bool) -> HTTP2HeaderBlock {
        var block = HTTP2HeaderBlock()
        block.append(name: ":method", value: "POST")
        block.append(name: ":scheme", value: secure ? "https" : "http")
        block.append(name: ":path", value: path)
        block.append(name: ":authority", value: authority)
        block.append(name: "content-type", value: "application/grpc")
        block.append(name: "te", value: "trailers")
        return block
    }
}
