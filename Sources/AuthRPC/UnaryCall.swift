import HTTP2Client
import SwiftProtobuf

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
    nonisolated(nonsending) public func unary<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
        _ method: MethodDescriptor,
        request: Request,
        responseType: Response.Type = Response.self,
        options: CallOptions? = nil
    ) async throws(RPCError) -> UnaryResponse<Response> {
        try await unary(method, request: request, serializer: ProtobufSerializer<Request>(),
                        deserializer: ProtobufDeserializer<Response>(), options: options)
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
    nonisolated(nonsending) public func unary<Serializer: MessageSerializer, Deserializer: MessageDeserializer>(
        _ method: MethodDescriptor,
        request: Serializer.Message,
        serializer: Serializer,
        deserializer: Deserializer,
        options: CallOptions? = nil
    ) async throws(RPCError) -> UnaryResponse<Deserializer.Message> {
        let options = (options ?? defaultCallOptions).addingProviderMetadata()
        let deadline = options.timeout.map { ContinuousClock.now + min($0, CallOptions.longestTimeout) }
        if Task.isCancelled { throw RPCError(code: .cancelled, message: "the call was cancelled before it started") }
        try options.validateForSending()
        try checkCredentialsAllowed(options)
        let body = try frame(request, serializer: serializer, compression: options.compression)

        let call = AuthTokenContext(authority: options.authority ?? defaultAuthority, method: method)
        var tokenRetried = false
        while true {
            let token = try await TokenResolution.token(for: options.credentials, call: call, deadline: deadline)
            do {
                return try await exchange(method, body: body, token: token, options: options, deadline: deadline, deserializer: deserializer)
            } catch where error.code == .unauthenticated && !tokenRetried && options.retriesUnauthenticatedOnce {
                guard let token, case .provider(let provider) = options.credentials,
                      let invalidatable = provider as? any InvalidatableAuthTokenProvider else { throw error }
                tokenRetried = true
                logger.debug("server rejected the token; retrying once with a fresh one", metadata: ["method": "\(method)"])
                await invalidatable.invalidate(token: token)
            }
        }
    }

    /// Sends the request on a connection and decodes the answer, retrying transparently (at most
    /// twice, within the deadline) when the server cannot have processed it.
    // Inlined into `unary`, so a waiting call holds one async frame here instead of two (each
    // frame that does not fit the task's current slab costs a new ~1 KiB slab per call in flight).
    @inline(__always)
    nonisolated(nonsending) private func exchange<Deserializer: MessageDeserializer>(
        _ method: MethodDescriptor,
        body: [UInt8],
        token: String?,
        options: CallOptions,
        deadline: ContinuousClock.Instant?,
        deserializer: Deserializer
    ) async throws(RPCError) -> UnaryResponse<Deserializer.Message> {
        var transparentRetries = 0
        while true {
            let connection = try await connections.connection(deadline: deadline)
            let request = try makeRequest(method, body: body, token: token, options: options, deadline: deadline)
            let response: HTTP2Response
            do throws(HTTP2Error) {
                // Handed over, not borrowed: the header block is freed once submitted rather than
                // held by this frame while the call waits.
                response = try await connection.send(consume request)
            } catch where error.isRetrySafe && transparentRetries < 2 && !Task.isCancelled {
                transparentRetries += 1
                logger.debug("request not processed by the server; retrying on a new stream", metadata: ["method": "\(method)", "reason": "\(error)"])
                continue
            } catch {
                throw RPCError(transportFailure: error, deadline: deadline)
            }
            return try ResponseDecoder.decode(response, deserializer: deserializer, maxMessageBytes: options.maxResponseMessageBytes).get()
        }
    }

    /// Bearer tokens never cross a plaintext connection without the caller's explicit opt-in.
    private func checkCredentialsAllowed(_ options: CallOptions) throws(RPCError) {
        guard !transportSecurity.isSecure, !options.allowsInsecureCredentials else { return }
        if options.credentials != nil || options.initialMetadata.contains(key: "authorization") {
            throw RPCError(
                code: .unauthenticated,
                message: "refusing to send credentials over a plaintext connection to \(target); use TLS, "
                    + "or set CallOptions.allowsInsecureCredentials for a local test server")
        }
    }

    private func frame<Serializer: MessageSerializer>(_ request: Serializer.Message, serializer: Serializer, compression: CompressionAlgorithm?) throws(RPCError) -> [UInt8] {
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
    private func makeRequest(_ method: MethodDescriptor, body: [UInt8], token: String?, options: CallOptions, deadline: ContinuousClock.Instant?) throws(RPCError) -> HTTP2Request {
        let authority = options.authority ?? defaultAuthority
        var headers = HTTP2HeaderBlock()
        headers.reserveCapacity(fields: 11 + options.initialMetadata.count,
                                byteCount: 192 + method.path.utf8.count + authority.utf8.count + (token?.utf8.count ?? 0))
        headers.append(contentsOf: requestLine)
        headers.append(name: ":path", value: method.path)
        headers.append(name: ":authority", value: authority)
        if let deadline {
            let remaining = deadline - .now
            guard remaining > .zero else { throw RPCError(code: .deadlineExceeded, message: "deadline exceeded before the request was sent") }
            headers.append(name: "grpc-timeout", value: GRPCTimeout.encode(remaining))
        }
        if options.compression == nil && options.userAgentPrefix == nil {
            headers.append(contentsOf: Self.plainCallFields)
        } else {
            Self.appendCallFields(to: &headers, compression: options.compression, userAgentPrefix: options.userAgentPrefix)
        }
        if let token {
            headers.append(name: "authorization", value: "Bearer ", valueSuffix: token)
        }
        for (key, value) in options.initialMetadata where token == nil || key != "authorization" {
            headers.append(name: key, value: Metadata.wireValue(value))
        }
        return HTTP2Request(
            headerBlock: headers,
            body: body,
            deadline: deadline,
            // Room for the prefix; a longer body is either too large or more than one message.
            maxResponseBodyBytes: options.maxResponseMessageBytes > Int.max - Framing.prefixLength ? Int.max : options.maxResponseMessageBytes + Framing.prefixLength)
    }

    /// `te` to `user-agent` for a call without compression or a user-agent prefix, built once.
    private static let plainCallFields: HTTP2HeaderBlock = {
        var block = HTTP2HeaderBlock()
        appendCallFields(to: &block, compression: nil, userAgentPrefix: nil)
        return block
    }()

    private static func appendCallFields(to headers: inout HTTP2HeaderBlock, compression: CompressionAlgorithm?, userAgentPrefix: String?) {
        headers.append(name: "te", value: "trailers")
        headers.append(name: "content-type", value: "application/grpc")
        if let compression {
            headers.append(name: "grpc-encoding", value: compression.rawValue)
        }
        headers.append(name: "grpc-accept-encoding", value: CompressionAlgorithm.acceptEncodingHeader)
        headers.append(name: "user-agent", value: userAgentPrefix.map { "\($0) \(Channel.userAgent)" } ?? Channel.userAgent)
    }
}
