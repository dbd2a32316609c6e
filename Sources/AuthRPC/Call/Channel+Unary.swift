import HTTP2Client
import Logging
public import SwiftProtobuf

/// Where a call stands between its awaits.
private struct CallProgress {
    /// Whether `token` holds this attempt's token (nil then means a call without credentials).
    var tokenResolved = false
    var token: String?
    /// A connection waited for, to send on next.
    var connection: HTTP2Connection?
    /// The rejected token to invalidate before asking again.
    var pendingInvalidation: (any InvalidatableAuthTokenProvider, String)?
    var tokenRetried = false
    var transparentRetries = 0
}

/// What a call sends, settled before anything is awaited.
@usableFromInline
struct PreparedCall {
    let options: CallOptions
    /// When the call must have ended; nil for no deadline.
    let deadline: ContinuousClock.Instant?
    /// The framed request message (kept for transparent retries).
    let body: [UInt8]
    /// The method and authority, as token providers see them.
    let context: AuthTokenContext
}

extension Channel {
    /// Makes a unary call with swift-protobuf messages.
    ///
    /// - Parameters:
    ///   - method: The method to call.
    ///   - request: The request message.
    ///   - responseType: The response message type.
    ///   - options: The call's options; the channel's ``defaultCallOptions`` when `nil`.
    /// - Returns: The response message with the response headers and trailers.
    /// - Throws: ``RPCError`` for every failure.
    // Inlinable (as is the call below): the caller's module specializes the whole generic part
    // into its own frame, so a waiting call holds no generic frame or buffer of this module's.
    @inlinable
    nonisolated(nonsending) public func unary<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        _ method: MethodDescriptor,
        request: Request,
        responseType: Response.Type = Response.self,
        options: CallOptions? = nil
    ) async throws(RPCError) -> UnaryResponse<Response> {
        try await unary(
            method,
            request: request,
            serializer: ProtobufSerializer<Request>(),
            deserializer: ProtobufDeserializer<Response>(),
            options: options
        )
    }

    /// Makes a unary call with any message codec.
    ///
    /// The deadline (``CallOptions/timeout``) starts now and covers resolving the token,
    /// connecting and the exchange. Metadata and credentials are checked before anything is sent.
    /// A request the server cannot have processed (GOAWAY, REFUSED_STREAM, a connection lost
    /// before the request left) is retried transparently, and an `unauthenticated` answer to a
    /// token from an ``InvalidatableAuthTokenProvider`` is retried once with a fresh token.
    ///
    /// - Throws: ``RPCError`` for every failure.
    @inlinable
    nonisolated(nonsending) public func unary<Serializer: MessageSerializer, Deserializer: MessageDeserializer>(
        _ method: MethodDescriptor,
        request: Serializer.Message,
        serializer: Serializer,
        deserializer: Deserializer,
        options: CallOptions? = nil
    ) async throws(RPCError) -> UnaryResponse<Deserializer.Message> {
        // Only what crosses a suspension lives in an async frame, and a waiting call keeps every
        // frame of its chain (each that overflows the task's slab costs a new ~1 KiB slab per
        // call in flight). So the generic work happens before and after, in plain functions, and
        // the waiting is done by `perform`, which is not generic and holds little.
        let call = try prepare(method, request: request, serializer: serializer, options: options)
        return try await perform(call).decode(deserializer).get()
    }

    /// Settles everything a call sends before anything is awaited: options, deadline, checks,
    /// and the framed message.
    @usableFromInline @inline(never)
    func prepare<Serializer: MessageSerializer>(
        _ method: MethodDescriptor,
        request: Serializer.Message,
        serializer: Serializer,
        options: CallOptions?
    ) throws(RPCError) -> PreparedCall {
        let options = (options ?? defaultCallOptions).addingProviderMetadata()
        let deadline = options.timeout.map { ContinuousClock.now + min($0, CallOptions.longestTimeout) }
        if Task.isCancelled { throw RPCError(code: .cancelled, message: "the call was cancelled before it started") }
        try options.validateForSending()
        try checkCredentialsAllowed(options)
        let body = try frame(request, serializer: serializer, compression: options.compression)
        let context = AuthTokenContext(authority: options.authority ?? defaultAuthority, method: method)
        return PreparedCall(options: options, deadline: deadline, body: body, context: context)
    }

    /// Resolves the token, sends the request and checks the answer up to its message bytes,
    /// retrying what may be retried: a request the server cannot have processed (at most twice,
    /// within the deadline), and an `unauthenticated` answer to a token from an
    /// ``InvalidatableAuthTokenProvider`` (once, with a fresh token).
    ///
    /// Every decision is made by `nextStep` and `settle`, plain functions; this loop only awaits
    /// what they ask for, so its frame (kept while the call waits) holds little.
    @usableFromInline @inline(never)
    nonisolated(nonsending) func perform(_ call: PreparedCall) async throws(RPCError) -> ResponsePayload {
        var progress = CallProgress()
        while true {
            switch try nextStep(call, &progress) {
            case .send(let connection):
                let request = try makeRequest(call, token: progress.token)
                let result: Result<HTTP2Response, HTTP2Error>
                do throws(HTTP2Error) {
                    // Handed over, not borrowed: the header block is freed once submitted rather
                    // than held by this frame while the call waits.
                    result = .success(try await connection.send(consume request))
                } catch {
                    result = .failure(error)
                }
                if let payload = try settle(call, &progress, result) { return payload }
            case .askProvider(let provider):
                progress.token = try await TokenResolution.ask(provider, call: call.context, deadline: call.deadline)
                progress.tokenResolved = true
            case .waitForConnection(let attempt):
                progress.connection = try await connections.wait(for: attempt, deadline: call.deadline)
            case .invalidate(let provider, let token):
                try await TokenResolution.invalidate(token, of: provider, deadline: call.deadline)
            }
        }
    }

    /// What `perform` awaits next.
    private enum CallStep {
        case send(HTTP2Connection)
        case askProvider(any AuthTokenProvider)
        case waitForConnection(Task<Result<HTTP2Connection, HTTP2Error>, Never>)
        case invalidate(any InvalidatableAuthTokenProvider, token: String)
    }

    /// What to await next: an invalidation owed, the provider when no token is known, the
    /// connection attempt when no connection takes streams, else the send itself.
    @inline(never)
    private func nextStep(_ call: PreparedCall, _ progress: inout CallProgress) throws(RPCError) -> CallStep {
        if let (provider, token) = progress.pendingInvalidation {
            progress.pendingInvalidation = nil
            return .invalidate(provider, token: token)
        }
        if !progress.tokenResolved {
            switch try TokenResolution.lookup(call.options.credentials, call: call.context) {
            case .resolved(let token):
                progress.token = token
                progress.tokenResolved = true
            case .ask(let provider):
                return .askProvider(provider)
            }
        }
        if let connection = progress.connection {
            progress.connection = nil
            return .send(connection)
        }
        switch try connections.nextStep() {
        case .use(let connection): return .send(connection)
        case .wait(let attempt): return .waitForConnection(attempt)
        }
    }

    /// The answer to one attempt: the payload, nil to go round again (`progress` says how), or
    /// the call's error.
    @inline(never)
    private func settle(
        _ call: PreparedCall,
        _ progress: inout CallProgress,
        _ result: consuming Result<HTTP2Response, HTTP2Error>
    ) throws(RPCError) -> ResponsePayload? {
        switch result {
        case .failure(let error):
            guard error.isRetrySafe, progress.transparentRetries < 2, !Task.isCancelled else {
                throw RPCError(transportFailure: error, deadline: call.deadline)
            }
            progress.transparentRetries += 1
            logger.debug(
                "request not processed by the server; retrying on a new stream",
                metadata: ["method": "\(call.context.method)", "reason": "\(error)"]
            )
            return nil
        case .success(let response):
            switch ResponseDecoder.payload(of: response, maxMessageBytes: call.options.maxResponseMessageBytes) {
            case .success(let payload):
                return payload
            case .failure(let error):
                guard error.code == .unauthenticated, !progress.tokenRetried, call.options.retriesUnauthenticatedOnce,
                    let token = progress.token, let provider = call.options.credentials?.provider,
                    let invalidatable = provider as? any InvalidatableAuthTokenProvider
                else { throw error }
                logger.debug(
                    "server rejected the token; retrying once with a fresh one",
                    metadata: ["method": "\(call.context.method)"]
                )
                progress.tokenRetried = true
                progress.pendingInvalidation = (invalidatable, token)
                progress.tokenResolved = false
                progress.token = nil
                progress.transparentRetries = 0
                return nil
            }
        }
    }

    /// Bearer tokens never cross a plaintext connection without the caller's explicit opt-in.
    private func checkCredentialsAllowed(_ options: CallOptions) throws(RPCError) {
        guard !transportSecurity.isSecure, !options.allowsInsecureCredentials else { return }
        if options.credentials != nil || options.initialMetadata.contains(key: "authorization") {
            throw RPCError(
                code: .unauthenticated,
                message: "refusing to send credentials over a plaintext connection to \(target); use TLS, "
                    + "or set CallOptions.allowsInsecureCredentials for a local test server"
            )
        }
    }

    private func frame<Serializer: MessageSerializer>(
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
    /// `authorization`, then the caller's metadata. The fields that do not change between calls
    /// are copied from blocks built once.
    @inline(never)
    private func makeRequest(_ call: PreparedCall, token: String?) throws(RPCError) -> HTTP2Request {
        var headers = HTTP2HeaderBlock()
        headers.reserveCapacity(
            fields: 11 + call.options.initialMetadata.count,
            byteCount: 192 + call.context.method.path.utf8.count + call.context.authority.utf8.count
                + (token?.utf8.count ?? 0)
        )
        headers.append(contentsOf: requestLine)
        headers.append(name: ":path", value: call.context.method.path)
        headers.append(name: ":authority", value: call.context.authority)
        if let deadline = call.deadline {
            let remaining = deadline - .now
            guard remaining > .zero else {
                throw RPCError(code: .deadlineExceeded, message: "deadline exceeded before the request was sent")
            }
            headers.append(name: "grpc-timeout", value: GRPCTimeout.encode(remaining))
        }
        if call.options.compression == nil && call.options.userAgentPrefix == nil {
            headers.append(contentsOf: Self.plainCallFields)
        } else {
            Self.appendCallFields(
                to: &headers,
                compression: call.options.compression,
                userAgentPrefix: call.options.userAgentPrefix
            )
        }
        if let token {
            headers.append(name: "authorization", value: "Bearer ", valueSuffix: token)
        }
        for (key, value) in call.options.initialMetadata where token == nil || key != "authorization" {
            headers.append(name: key, value: Metadata.wireValue(value))
        }
        return HTTP2Request(
            headerBlock: headers,
            body: call.body,
            deadline: call.deadline,
            // Room for the prefix; a longer body is either too large or more than one message.
            maxResponseBodyBytes: call.options.maxResponseMessageBytes > Int.max - Framing.prefixLength
                ? Int.max : call.options.maxResponseMessageBytes + Framing.prefixLength
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
