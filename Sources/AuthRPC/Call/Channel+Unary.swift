import AuthRPCSystem
import AuthRPCTransport
import Logging
public import SwiftProtobuf

/// Where a call stands between its awaits.
private struct CallProgress {
    /// Whether `token` holds this attempt's token (nil then means a call without credentials).
    var tokenResolved = false
    var token: String?
    /// The connection picked to check the call's authority on before its token, to send on next.
    var connection: HTTP2Connection?
    /// The rejected token to invalidate before asking again.
    var pendingInvalidation: (any InvalidatableAuthTokenProvider, String)?
    var tokenRetried = false
    var transparentRetries = 0
    /// The attempt under way, from 1; each starts on a new stream after the last one failed.
    var attempt = 1
    /// Whether the attempt under way has gone out yet (its `attemptStarted` is then reported).
    var attemptSent = false
    /// The retry policy's count of attempts and backoff.
    var retry = RetryState()
    /// When the next attempt may start, after a failed one the policy retries.
    var retryAt: ContinuousClock.Instant?
    /// The connection whose certificate was last found to cover the call's authority (held, so
    /// no other connection can take its place in memory and pass for it).
    var authorityCheckedOn: HTTP2Connection?
}

/// What a call sends, settled before anything is awaited.
@usableFromInline
struct PreparedCall {
    let options: CallOptions
    /// When the call must have ended; nil for no deadline.
    let deadline: ContinuousTime?
    /// ``deadline`` as the instant the waits before a send (a token, a connection, routes) take.
    var deadlineInstant: ContinuousClock.Instant? { deadline?.instant }
    /// The framed request message (kept for transparent retries).
    let body: [UInt8]
    /// The method and authority, as token providers see them.
    let context: AuthTokenContext
    /// Whether the authority must be checked against the server's certificate before any
    /// provider is asked (a TLS call whose authority is not the channel's verified name).
    let checksAuthority: Bool
    /// The interceptors to tell what happens (nil for a call without interceptors).
    let observers: CallObservers?
    /// The connections the call goes out on: the channel's own, or those of the group its
    /// router sends it to.
    let connections: ConnectionManager
    /// Whether the channel's router does not know its routes yet: the call waits for them, then
    /// is settled again.
    let awaitsRoutes: Bool
}

extension Channel {
    /// Makes a unary call with swift-protobuf messages.
    ///
    /// - Parameters:
    ///   - method: The method to call.
    ///   - request: The request message.
    ///   - responseType: The response message type.
    ///   - options: The call's options; the channel's ``defaultCallOptions`` when `nil`.
    ///   - serviceConfig: Defaults for the method that apply where the channel's own
    ///     ``serviceConfig`` has none for it (a generated client passes its API's published
    ///     config here); none by default.
    /// - Returns: The response message with the response headers and trailers.
    /// - Throws: ``RPCError`` for every failure.
    // Inlinable (as is the call below): the caller's module specializes the whole generic part
    // into its own frame, so a waiting call holds no generic frame or buffer of this module's.
    @inlinable
    nonisolated(nonsending) public func unary<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        _ method: MethodDescriptor,
        request: Request,
        responseType: Response.Type = Response.self,
        options: CallOptions? = nil,
        serviceConfig: ServiceConfig? = nil
    ) async throws(RPCError) -> UnaryResponse<Response> {
        try await unary(
            method,
            request: request,
            serializer: ProtobufSerializer<Request>(),
            deserializer: ProtobufDeserializer<Response>(),
            options: options,
            serviceConfig: serviceConfig
        )
    }

    /// Makes a unary call with any message codec.
    ///
    /// The pipeline, from the outside in: the interceptors (the channel's, then the call's), the
    /// service config's defaults for the method, the retry executor (the ``RetryPolicy``'s
    /// attempts, the transparent retry of a request the server cannot have processed, the one
    /// retry with a fresh token after an `unauthenticated` answer to an
    /// ``InvalidatableAuthTokenProvider``'s token), the token (resolved per attempt, after the
    /// authority is checked against the server's certificate on TLS), the stream. The deadline
    /// (``CallOptions/timeout``) starts when the interceptors hand the call on and covers every
    /// attempt, each token and each connection. Metadata and credentials are checked before
    /// anything is sent.
    ///
    /// - Parameters:
    ///   - method: The method to call.
    ///   - request: The request message.
    ///   - serializer: Turns the request into bytes (once, whatever the number of attempts).
    ///   - deserializer: Turns the response bytes into the response message.
    ///   - options: The call's options; the channel's ``defaultCallOptions`` when `nil`.
    ///   - serviceConfig: Defaults for the method where the channel's own ``serviceConfig`` has
    ///     none for it; none by default.
    /// - Returns: The response message with the response headers and trailers.
    /// - Throws: ``RPCError`` for every failure.
    @inlinable
    nonisolated(nonsending) public func unary<Serializer: MessageSerializer, Deserializer: MessageDeserializer>(
        _ method: MethodDescriptor,
        request: Serializer.Message,
        serializer: Serializer,
        deserializer: Deserializer,
        options: CallOptions? = nil,
        serviceConfig: ServiceConfig? = nil
    ) async throws(RPCError) -> UnaryResponse<Deserializer.Message> {
        // A waiting call keeps every async frame of its chain (each that overflows the task's
        // slab costs a new ~1 KiB slab per call in flight), and this function's frame is in every
        // caller's: it has room for every value any of its paths keeps in memory, whether or not
        // that path runs. So the generic work happens before and after, in plain functions
        // specialized for the messages (an unspecialized one would need a copy of the request
        // in this frame), the interceptors' path answers with one word, and the waiting is done
        // by `perform`, which is not generic and holds little.
        let entry = entry(for: options)
        if entry.intercepted {
            return try await interceptedResponse(
                method,
                request: request,
                serializer: serializer,
                deserializer: deserializer,
                options: options,
                serviceConfig: serviceConfig
            ).take()
        }
        let body = try frameRequest(request, serializer: serializer, compression: entry.compression)
        return try Self.decoded(
            await perform(method, body: body, options: options, serviceConfig: serviceConfig, observers: nil),
            deserializer
        )
    }

    /// The response message parsed from an OK answer. Not inlined (but specialized) into the
    /// caller: the parse's intermediate results would take room in its async frame.
    @inlinable @inline(never)
    static func decoded<Deserializer: MessageDeserializer>(
        _ payload: ResponsePayload,
        _ deserializer: Deserializer
    ) throws(RPCError) -> UnaryResponse<Deserializer.Message> {
        try payload.decode(deserializer).get()
    }

    /// The request message, framed (and compressed when the options ask for it): the only
    /// generic step before the call is sent. Specialized for the message but not inlined, so
    /// the request is handed over as the caller holds it; an unspecialized generic call would
    /// need it in memory, a copy the caller's async frame would keep for the whole call.
    @inlinable @inline(never)
    func frameRequest<Serializer: MessageSerializer>(
        _ request: Serializer.Message,
        serializer: Serializer,
        compression: CompressionAlgorithm?
    ) throws(RPCError) -> [UInt8] {
        try frameMessage(request, serializer: serializer, compression: compression)
    }

    /// Settles everything a call sends before anything is awaited: options (with the service
    /// config's defaults), deadline and checks. The same inputs settle to the same call, so the
    /// general loop settles it again from them rather than have the first attempt's frame hold it.
    /// Not inlined: its copies of the options would take room in the general loop's frame.
    @inline(never)
    private func prepare(
        _ method: MethodDescriptor,
        body: [UInt8],
        options: CallOptions?,
        serviceConfig defaults: ServiceConfig?,
        observers: CallObservers?,
        started: CallStart,
        checkingCancellation: Bool
    ) throws(RPCError) -> PreparedCall {
        var options = options ?? defaultCallOptions
        options.addProviderMetadata()
        if let config = serviceConfig?.methodConfig(for: method) ?? defaults?.methodConfig(for: method) {
            options.applyDefaults(from: config)
        }
        var connections = self.connections
        var awaitsRoutes = false
        if let routing {
            awaitsRoutes = try route(method, &options, &connections, routing, started)
        }
        let deadline = started.deadline(after: options.timeout)
        if checkingCancellation, Task.isCancelled {
            throw RPCError(code: .cancelled, message: "the call was cancelled before it started")
        }
        try options.validateForSending()
        try checkCredentialsAllowed(options)
        if let limit = options.maxRequestMessageBytes, body.count - Framing.prefixLength > limit {
            throw RPCError(
                code: .resourceExhausted,
                message:
                    "request message of \(body.count - Framing.prefixLength) bytes is larger than the limit of \(limit) bytes"
            )
        }
        let context = AuthTokenContext(authority: options.authority ?? defaultAuthority, method: method)
        return PreparedCall(
            options: options,
            deadline: deadline,
            body: body,
            context: context,
            checksAuthority: authorityNeedsCheck(options.authority),
            observers: observers,
            connections: connections,
            awaitsRoutes: awaitsRoutes
        )
    }

    /// Asks the channel's router where the call goes: sets `connections` to its group's, caps
    /// the call's timeout at the route's longest duration (gRFC A31), and says whether the
    /// routes are still to come (`connections` is then the channel's own).
    private func route(
        _ method: MethodDescriptor,
        _ options: inout CallOptions,
        _ connections: inout ConnectionManager,
        _ routing: CallRouting,
        _ started: CallStart
    ) throws(RPCError) -> Bool {
        let maxDuration: Duration?
        switch routing.router.route(path: method.path, metadata: options.initialMetadata, roll: started.roll) {
        case .pending:
            return true
        case .channel(let longest):
            maxDuration = longest
        case .group(let name, let longest):
            connections = try routing.connections(forGroup: name)
            maxDuration = longest
        case .unavailable(let reason):
            throw RPCError(code: .unavailable, message: reason)
        }
        if let maxDuration, maxDuration > .zero {
            options.timeout = min(options.timeout ?? maxDuration, maxDuration)
        }
        return false
    }

    /// Runs the call: its first attempt from this small frame when nothing stands before the send
    /// (no interceptors, no authority to check first, a token known without asking, a connection
    /// ready) and the answer is the message; anything else, and any answer the call may retry, goes
    /// to `performAttempts`. A call that succeeds at once keeps nothing of the retry, token or
    /// interceptor machinery in its frames while it waits.
    @usableFromInline @inline(never)
    nonisolated(nonsending) func perform(
        _ method: MethodDescriptor,
        body: [UInt8],
        options: CallOptions?,
        serviceConfig: ServiceConfig?,
        observers: CallObservers?
    ) async throws(RPCError) -> ResponsePayload {
        // What is worked out before the send lives in plain functions (the prepared call
        // included: it stays out of this frame and the caller's), and the general loop is called
        // from one place: an async frame keeps every local of its function (and every argument of
        // each call site), so this one holds little more than what crosses the send.
        let started = CallStart.now()
        let start: AttemptsStart
        switch try firstStep(method, body, options, serviceConfig, observers, started) {
        case .send(let exchange, let token, let acceptance):
            // `exchange.answer()`, written out: the call waits on this one continuation, which the
            // connection's I/O thread resumes exactly once (with the answer, or with `cancelled`
            // after the handler's cancel), in no async frame of the transport's.
            let answer = await withTaskCancellationHandler {
                await withUnsafeContinuation { exchange.submit(answeringTo: $0) }
            } onCancel: {
                exchange.cancel()
            }
            exchange.received()
            exchange.keepBody(of: answer.result)
            if let payload = acceptedAtOnce(acceptance, answer.result, sent: body) {
                return payload
            }
            start = .settle(token: token, result: answer.result, headersReceived: answer.afterHeaders)
        case .general(let general):
            start = general
        }
        return try await performAttempts(method, body, options, serviceConfig, observers, started, from: start)
    }

    /// How `perform` starts: sending at once, or through the general loop.
    private enum FirstStep {
        case send(HTTP2Exchange, token: String?, acceptance: Acceptance)
        case general(AttemptsStart)
    }

    /// What `acceptedAtOnce` needs of the call's options.
    private struct Acceptance {
        let maxResponseMessageBytes: Int
        let hasRetryPolicy: Bool
    }

    /// Where `performAttempts` takes the call up.
    ///
    /// The cases with a payload are indirect: a box is made only for a call that does not
    /// succeed at once, and the enum is one word in `perform`'s frame (part of what keeps that
    /// frame, the cancellation handler and its closure within one 984-byte task-allocator slab).
    private enum AttemptsStart {
        /// From the beginning.
        case fresh
        /// The token is known; no connection was ready: the change to wait for.
        indirect case waiting(token: String?, for: ChangeSignal)
        /// The provider had no token at hand: it is asked (and not looked up again).
        indirect case asking(any AuthTokenProvider)
        /// The first attempt went out with `token`; its answer is to be settled.
        indirect case settle(token: String?, result: Result<HTTP2Response, TransportFailure>, headersReceived: Bool)
    }

    /// The call prepared, and whether nothing stands before its first send: no interceptors, no
    /// authority to check first, a token known without asking, a connection ready (its request
    /// then on a stream of that connection's, not yet submitted).
    @inline(never)
    private func firstStep(
        _ method: MethodDescriptor,
        _ body: [UInt8],
        _ options: CallOptions?,
        _ serviceConfig: ServiceConfig?,
        _ observers: CallObservers?,
        _ started: CallStart
    ) throws(RPCError) -> FirstStep {
        let call = try prepare(
            method,
            body: body,
            options: options,
            serviceConfig: serviceConfig,
            observers: observers,
            started: started,
            checkingCancellation: true
        )
        guard call.observers == nil, !call.checksAuthority, !call.awaitsRoutes else { return .general(.fresh) }
        let token: String?
        switch try TokenResolution.lookup(call.options, call: call.context) {
        case .resolved(let resolved): token = resolved
        case .ask(let provider): return .general(.asking(provider))
        }
        switch try call.connections.nextStep(waitForReady: call.options.waitForReady) {
        case .use(let connection):
            // `prepare` has just checked for cancellation, and nothing since could wait: from
            // here on a cancellation reaches the stream through `perform`'s handler (at once, if
            // it already came), which resets it or keeps it from being sent.
            let exchange = connection.exchange(for: try makeRequest(call, token: token, previousAttempts: 0))
            let acceptance = Acceptance(
                maxResponseMessageBytes: call.options.maxResponseMessageBytes,
                hasRetryPolicy: call.options.retryPolicy != nil
            )
            return .send(exchange, token: token, acceptance: acceptance)
        case .wait(let signal):
            return .general(.waiting(token: token, for: signal))
        }
    }

    /// An attempt's request on a stream of `connection`'s, not yet submitted; nil when the task
    /// is already cancelled (the answer `HTTP2Connection.send` gives then).
    @inline(never)
    private func openExchange(
        _ call: PreparedCall,
        on connection: HTTP2Connection,
        token: String?,
        previousAttempts: Int
    ) throws(RPCError) -> HTTP2Exchange? {
        if Task.isCancelled { return nil }
        return connection.exchange(
            for: try makeRequest(call, token: token, previousAttempts: previousAttempts)
        )
    }

    /// The first attempt's answer when it is the message (what `settle` returns for it, without
    /// anything to record for a retry); nil when `settle` must decide.
    ///
    /// The request (`sent`) is not sent again then, and the response body is about to be parsed:
    /// both buffers are kept for the thread's next call (``ThreadBufferCache``). This call still
    /// holds them until it returns, which is before the thread's next call can take them (no
    /// await lies between); should anything still hold one then, the taker's first write copies
    /// it.
    @inline(never)
    private func acceptedAtOnce(
        _ acceptance: Acceptance,
        _ result: Result<HTTP2Response, TransportFailure>,
        sent request: [UInt8]
    ) -> ResponsePayload? {
        guard case .success(let response) = result,
            case .success(let payload) = ResponseDecoder.payload(
                of: response,
                maxMessageBytes: acceptance.maxResponseMessageBytes
            )
        else { return nil }
        if acceptance.hasRetryPolicy { retryThrottle?.recordSuccess() }
        ThreadBufferCache.keep(request)
        ThreadBufferCache.keep(response.body)
        return payload
    }

    /// Runs the call's attempts from where `perform` left it (`start`), then resolves each attempt's
    /// token, sends the request and checks the answer up to its message bytes, retrying what may
    /// be retried: a request the server cannot have processed (at most twice per attempt, within
    /// the deadline), an `unauthenticated` answer to a token from an
    /// ``InvalidatableAuthTokenProvider`` (once, with a fresh token), and what the call's
    /// ``RetryPolicy`` retries (after its backoff, within the deadline).
    ///
    /// Every decision is made by `nextStep` and `settle`, plain functions; this loop only awaits
    /// what they ask for, so its frame (kept while the call waits) holds little.
    @inline(never)
    nonisolated(nonsending) private func performAttempts(
        _ method: MethodDescriptor,
        _ body: [UInt8],
        _ options: CallOptions?,
        _ serviceConfig: ServiceConfig?,
        _ observers: CallObservers?,
        _ started: CallStart,
        from start: AttemptsStart
    ) async throws(RPCError) -> ResponsePayload {
        // Settled again from the same inputs (so with the same deadline), as `firstStep` did.
        let call = try await settled(method, body, options, serviceConfig, observers, started)
        var progress = CallProgress()
        switch start {
        case .fresh:
            break
        case .waiting(let token, let signal):
            progress.token = token
            progress.tokenResolved = true
            try await call.connections.wait(for: signal, deadline: call.deadlineInstant)
        case .asking(let provider):
            // What `nextStep` does when the lookup finds no token, without looking up again.
            call.observers?.report(.tokenRequested, attempt: progress.attempt)
            progress.token = try await TokenResolution.ask(provider, call: call.context, deadline: call.deadlineInstant)
            progress.tokenResolved = true
        case .settle(let token, let result, let headersReceived):
            progress.token = token
            progress.tokenResolved = true
            progress.attemptSent = true
            if let payload = try settle(call, &progress, result, headersReceived: headersReceived) {
                return payload
            }
        }
        while true {
            switch try nextStep(call, &progress) {
            case .send(let connection):
                // The request goes to the stream before the await, so this frame holds only the
                // exchange while the call waits.
                let answer: HTTP2Exchange.Answer
                if let exchange = try openExchange(
                    call,
                    on: connection,
                    token: progress.token,
                    previousAttempts: previousAttempts(call, progress)
                ) {
                    answer = await exchange.answer()
                } else {
                    answer = (.failure(.cancelled), false)
                }
                if let payload = try settle(call, &progress, answer.result, headersReceived: answer.afterHeaders) {
                    return payload
                }
            case .askProvider(let provider):
                progress.token = try await TokenResolution.ask(
                    provider,
                    call: call.context,
                    deadline: call.deadlineInstant
                )
                progress.tokenResolved = true
            case .waitForConnection(let signal):
                try await call.connections.wait(for: signal, deadline: call.deadlineInstant)
            case .invalidate(let provider, let token):
                try await TokenResolution.invalidate(token, of: provider, deadline: call.deadlineInstant)
            case .backOff(let instant):
                try await Self.backOff(until: instant)
            }
        }
    }

    /// The call as `prepare` settles it, once the channel's router knows its routes: a call on
    /// an `xds:///` channel made before the control plane's first answer waits for them (until
    /// its deadline), then is settled again. Apart from `performAttempts`, whose frame would
    /// otherwise keep the second settling's arguments while the call waits.
    @inline(never)
    nonisolated(nonsending) private func settled(
        _ method: MethodDescriptor,
        _ body: [UInt8],
        _ options: CallOptions?,
        _ serviceConfig: ServiceConfig?,
        _ observers: CallObservers?,
        _ started: CallStart
    ) async throws(RPCError) -> PreparedCall {
        var waited = false
        while true {
            let call = try prepare(
                method,
                body: body,
                options: options,
                serviceConfig: serviceConfig,
                observers: observers,
                started: started,
                checkingCancellation: false
            )
            // Once the router has answered, its routes are known (or why not): one wait at most.
            guard call.awaitsRoutes, !waited, let router = routing?.router else { return call }
            try await Self.awaitRoutes(of: router, target: target, deadline: call.deadlineInstant)
            waited = true
        }
    }

    /// Waits, until `deadline`, for `router` to know its routes.
    nonisolated(nonsending) private static func awaitRoutes(
        of router: any ChannelCallRouter,
        target: String,
        deadline: ContinuousClock.Instant?
    ) async throws(RPCError) {
        switch await race(deadline: deadline, { await router.routesKnown() }) {
        case .value:
            return
        case .deadlineExceeded:
            throw RPCError(
                code: .deadlineExceeded,
                message: "deadline exceeded while waiting for the routes of \(target)"
            )
        case .cancelled, .failed:
            throw RPCError(code: .cancelled, message: "cancelled while waiting for the routes of \(target)")
        }
    }

    /// What `perform` awaits next.
    private enum CallStep {
        case send(HTTP2Connection)
        case askProvider(any AuthTokenProvider)
        case waitForConnection(ChangeSignal)
        case invalidate(any InvalidatableAuthTokenProvider, token: String)
        case backOff(until: ContinuousClock.Instant)
    }

    /// What to await next: an invalidation owed, the wait before a retry, a connection when the
    /// call's authority must be checked against its certificate first, the provider when no
    /// token is known, a change of the channel when no connection takes streams, else the send.
    @inline(never)
    private func nextStep(_ call: PreparedCall, _ progress: inout CallProgress) throws(RPCError) -> CallStep {
        if let (provider, token) = progress.pendingInvalidation {
            progress.pendingInvalidation = nil
            return .invalidate(provider, token: token)
        }
        if let retryAt = progress.retryAt {
            progress.retryAt = nil
            return .backOff(until: retryAt)
        }
        if call.checksAuthority, progress.authorityCheckedOn == nil {
            // Before any provider is asked, a connection must prove the server holds the name a
            // token would be minted for (`send` checks each connection the call goes out on).
            if progress.connection == nil {
                switch try call.connections.nextStep(waitForReady: call.options.waitForReady) {
                case .use(let connection): progress.connection = connection
                case .wait(let signal): return .waitForConnection(signal)
                }
            }
            if let connection = progress.connection {
                try checkAuthority(of: call, on: connection)
                progress.authorityCheckedOn = connection
            }
        }
        if !progress.tokenResolved {
            switch try TokenResolution.lookup(call.options, call: call.context) {
            case .resolved(let token):
                progress.token = token
                progress.tokenResolved = true
            case .ask(let provider):
                call.observers?.report(.tokenRequested, attempt: progress.attempt)
                return .askProvider(provider)
            }
        }
        if let connection = progress.connection {
            progress.connection = nil
            return try send(call, on: connection, &progress)
        }
        // The load balancer's pick: each attempt (a retry too) asks again, so may go out on
        // another subchannel's connection, whose certificate `send` checks in turn.
        switch try call.connections.nextStep(waitForReady: call.options.waitForReady) {
        case .use(let connection): return try send(call, on: connection, &progress)
        case .wait(let signal): return .waitForConnection(signal)
        }
    }

    /// The send step: on a connection whose certificate covers the call's authority (when it
    /// must be checked), reporting the attempt's start the first time it goes out.
    private func send(
        _ call: PreparedCall,
        on connection: HTTP2Connection,
        _ progress: inout CallProgress
    ) throws(RPCError) -> CallStep {
        if call.checksAuthority, progress.authorityCheckedOn !== connection {
            try checkAuthority(of: call, on: connection)
            progress.authorityCheckedOn = connection
        }
        if !progress.attemptSent {
            progress.attemptSent = true
            call.observers?.report(.attemptStarted, attempt: progress.attempt)
        }
        return .send(connection)
    }

    /// The value of `grpc-previous-rpc-attempts` for the attempt under way: sent only by calls
    /// with a retry policy, from their second attempt on.
    private func previousAttempts(_ call: PreparedCall, _ progress: CallProgress) -> Int {
        call.options.retryPolicy == nil ? 0 : progress.attempt - 1
    }

    /// The answer to one attempt: the payload, nil to go round again (`progress` says how), or
    /// the call's error.
    @inline(never)
    private func settle(
        _ call: PreparedCall,
        _ progress: inout CallProgress,
        _ result: consuming Result<HTTP2Response, TransportFailure>,
        headersReceived: Bool
    ) throws(RPCError) -> ResponsePayload? {
        switch result {
        case .failure(let error):
            if error.isRetrySafe, progress.transparentRetries < 2, !Task.isCancelled {
                progress.transparentRetries += 1
                logger.debug(
                    "request not processed by the server; retrying on a new stream",
                    metadata: ["method": "\(call.context.method)", "reason": "\(error)"]
                )
                call.observers?.report(.transparentRetry, attempt: progress.attempt)
                return nil
            }
            let failure = RPCError(transportFailure: error, deadline: call.deadlineInstant)
            switch error {
            case .cancelled, .deadlineExceeded:
                throw withAttemptCount(failure, call, progress)
            default:
                try scheduleRetry(call, &progress, after: failure, committed: headersReceived, pushback: nil)
                return nil
            }
        case .success(let response):
            switch ResponseDecoder.payload(of: response, maxMessageBytes: call.options.maxResponseMessageBytes) {
            case .success(var payload):
                if call.options.retryPolicy != nil {
                    retryThrottle?.recordSuccess()
                    if progress.attempt > 1 {
                        payload.headers.replaceOrAddString(
                            String(progress.attempt - 1),
                            forKey: Self.previousAttemptsKey
                        )
                    }
                }
                return payload
            case .failure(let error):
                if error.code == .unauthenticated, !progress.tokenRetried, call.options.retriesUnauthenticatedOnce,
                    let token = progress.token, let provider = call.options.authTokenProvider,
                    let invalidatable = provider as? any InvalidatableAuthTokenProvider
                {
                    logger.debug(
                        "server rejected the token; retrying once with a fresh one",
                        metadata: ["method": "\(call.context.method)"]
                    )
                    call.observers?.report(.tokenInvalidated, attempt: progress.attempt)
                    progress.tokenRetried = true
                    progress.pendingInvalidation = (invalidatable, token)
                    startNextAttempt(&progress)
                    return nil
                }
                try scheduleRetry(
                    call,
                    &progress,
                    after: error,
                    committed: !response.endedWithHeaders,
                    pushback: RetryPushback(error.trailers)
                )
                return nil
            }
        }
    }

    /// Throws `error` unless the call's retry policy retries it; otherwise sets `progress` up for
    /// the next attempt after the policy's wait.
    private func scheduleRetry(
        _ call: PreparedCall,
        _ progress: inout CallProgress,
        after error: RPCError,
        committed: Bool,
        pushback: RetryPushback?
    ) throws(RPCError) {
        guard let policy = call.options.retryPolicy, policy.attemptBound > 1, !Task.isCancelled else {
            throw withAttemptCount(error, call, progress)
        }
        var generator = SystemRandomNumberGenerator()
        let now = ContinuousClock.now
        let decision = progress.retry.decide(
            after: error.code,
            committed: committed,
            pushback: pushback,
            policy: policy,
            throttle: retryThrottle,
            now: now,
            deadline: call.deadlineInstant,
            using: &generator
        )
        switch decision {
        case .stop(let reason):
            logger.debug(
                "not retrying",
                metadata: ["method": "\(call.context.method)", "status": "\(error.code)", "reason": "\(reason)"]
            )
            throw withAttemptCount(error, call, progress)
        case .retry(let wait):
            logger.debug(
                "retrying",
                metadata: ["method": "\(call.context.method)", "status": "\(error.code)", "after": "\(wait)"]
            )
            call.observers?.report(.retryScheduled, attempt: progress.attempt, delay: wait)
            progress.retryAt = now + wait
            startNextAttempt(&progress)
        }
    }

    /// A new attempt: a new stream with its own token and its own transparent retries.
    private func startNextAttempt(_ progress: inout CallProgress) {
        progress.attempt += 1
        progress.attemptSent = false
        progress.tokenResolved = false
        progress.token = nil
        progress.transparentRetries = 0
    }

    /// `error` with `grpc-previous-rpc-attempts` in its headers when a call with a retry policy
    /// made attempts before the last (as gRFC A6 tells the client how many were made).
    private func withAttemptCount(_ error: RPCError, _ call: PreparedCall, _ progress: CallProgress) -> RPCError {
        guard call.options.retryPolicy != nil, progress.attempt > 1 else { return error }
        var error = error
        error.headers.replaceOrAddString(String(progress.attempt - 1), forKey: Self.previousAttemptsKey)
        return error
    }

    static let previousAttemptsKey = "grpc-previous-rpc-attempts"

    /// Waits before a retry (the policy made sure the deadline is later).
    @inline(never)
    nonisolated(nonsending) private static func backOff(until instant: ContinuousClock.Instant) async throws(RPCError) {
        do {
            try await Task.sleep(until: instant, clock: .continuous)
        } catch {
            throw RPCError(code: .cancelled, message: "cancelled while waiting to retry")
        }
    }

    /// Bearer tokens never cross a plaintext connection without the caller's explicit opt-in.
    private func checkCredentialsAllowed(_ options: CallOptions) throws(RPCError) {
        guard !transportSecurity.isSecure, !options.allowsInsecureCredentials else { return }
        if options.hasCredentials || options.initialMetadata.contains(key: "authorization") {
            throw RPCError(
                code: .unauthenticated,
                message: "refusing to send credentials over a plaintext connection to \(target); use TLS, "
                    + "or set CallOptions.allowsInsecureCredentials for a local test server"
            )
        }
    }

    /// `frameRequest`'s work, generic.
    @usableFromInline
    func frameMessage<Serializer: MessageSerializer>(
        _ request: Serializer.Message,
        serializer: Serializer,
        compression: CompressionAlgorithm?
    ) throws(RPCError) -> [UInt8] {
        do {
            if let compression {
                return Framing.frame(compression.coding.compress(try serializer.serialize(request)), compressed: true)
            }
            var body = try serializer.serializeBehindPrefix(request)
            guard body.count >= Framing.prefixLength else {
                throw RPCError(code: .internalError, message: "the serializer left no room for the message prefix")
            }
            Framing.fillPrefix(of: &body, compressed: false)
            return body
        } catch {
            throw RPCError(code: .internalError, message: "could not serialize the request: \(error)", cause: error)
        }
    }

    /// The request as it goes on the wire: pseudo-headers, then `grpc-timeout` (the time left
    /// now), `te`, `content-type`, `grpc-encoding`, `grpc-accept-encoding`, `user-agent`,
    /// `grpc-previous-rpc-attempts` (a retry), `authorization`, then the caller's metadata. The
    /// header fields go as parts (`HTTP2RequestHead`) that the connection's I/O thread lays out
    /// into its own reused buffer: the fields that do not change between calls are blocks built
    /// once, and a call without metadata of its own allocates no block.
    @inline(never)
    private func makeRequest(
        _ call: PreparedCall,
        token: String?,
        previousAttempts: Int
    ) throws(RPCError) -> HTTP2Request {
        var timeout: GRPCTimeout?
        if let deadline = call.deadline {
            let remaining = deadline.nanoseconds(since: .now)
            guard remaining > 0 else {
                throw RPCError(code: .deadlineExceeded, message: "deadline exceeded before the request was sent")
            }
            timeout = deadline == .distantFuture ? .longest : GRPCTimeout(nanoseconds: remaining)
        }
        var common = Self.plainCallFields
        if call.options.compression != nil || call.options.userAgentPrefix != nil {
            common = HTTP2HeaderBlock()
            Self.appendCallFields(
                to: &common,
                compression: call.options.compression,
                userAgentPrefix: call.options.userAgentPrefix
            )
        }
        var metadata = HTTP2HeaderBlock()
        if !call.options.initialMetadata.isEmpty {
            metadata.reserveCapacity(fields: call.options.initialMetadata.count, byteCount: 128)
            for (key, value) in call.options.initialMetadata where token == nil || key != "authorization" {
                metadata.append(name: key, value: Metadata.wireValue(value))
            }
        }
        let head = HTTP2RequestHead(
            leading: requestLine,
            path: call.context.method.path,
            authority: call.context.authority,
            timeout: timeout,
            common: common,
            previousAttempts: previousAttempts > 0 ? String(previousAttempts) : nil,
            bearerToken: token,
            trailing: metadata
        )
        return HTTP2Request(
            head: head,
            body: call.body,
            deadline: call.deadline,
            // Room for the prefix; a longer body is either too large or more than one message.
            maxResponseBodyBytes: call.options.maxResponseMessageBytes > Int.max - Framing.prefixLength
                ? Int.max : call.options.maxResponseMessageBytes + Framing.prefixLength,
            // The body is gathered into a buffer this thread kept from an earlier call.
            responseBuffer: ThreadBufferCache.takeLargest()
        )
    }

    /// `te` to `user-agent` for a call without compression or a user-agent prefix, built once.
    private static let plainCallFields: HTTP2HeaderBlock = {
        var block = HTTP2HeaderBlock()
        appendCallFields(to: &block, compression: nil, userAgentPrefix: nil)
        return block
    }()

    private static func appendCallFields(
        to headers: inout HTTP2HeaderBlock,
        compression: CompressionAlgorithm?,
        userAgentPrefix: String?
    ) {
        headers.append(name: "te", value: "trailers")
        headers.append(name: "content-type", value: "application/grpc")
        if let compression {
            headers.append(name: "grpc-encoding", value: compression.rawValue)
        }
        headers.append(name: "grpc-accept-encoding", value: CompressionAlgorithm.acceptEncodingHeader)
        headers.append(
            name: "user-agent",
            value: userAgentPrefix.map { "\($0) \(Channel.userAgent)" } ?? Channel.userAgent
        )
    }
}
