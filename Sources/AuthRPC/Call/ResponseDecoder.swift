import AuthRPCSyntax
import AuthRPCTransport

/// Turns a complete HTTP/2 response into a unary result, following GRPC_CONFORMANCE.md
/// ("Response" and "Message framing").
enum ResponseDecoder {
    /// The whole answer as a unary result: `payload(of:maxMessageBytes:)`, then the message parsed.
    static func decode<Deserializer: MessageDeserializer>(
        _ response: HTTP2Response,
        deserializer: Deserializer,
        maxMessageBytes: Int
    ) -> Result<UnaryResponse<Deserializer.Message>, RPCError> {
        switch payload(of: response, maxMessageBytes: maxMessageBytes) {
        case .success(let payload): return payload.decode(deserializer)
        case .failure(let error): return .failure(error)
        }
    }

    /// Everything but parsing the message: metadata, content-type, status, framing and
    /// decompression. Not generic, so the call's retry loop can act on the status (an
    /// `unauthenticated` answer) before any message type is involved.
    static func payload(of response: HTTP2Response, maxMessageBytes: Int) -> Result<ResponsePayload, RPCError> {
        // Trailers-Only: the one header block is the trailers, and there were no headers.
        // Each keeps its block's field array as received (Metadata.Storage.received).
        let headers = response.endedWithHeaders ? Metadata() : Metadata(received: response.headers)
        let trailers = Metadata(received: response.endedWithHeaders ? response.headers : response.trailers)
        func failure(
            _ code: StatusCode,
            _ message: String,
            cause: (any Error)? = nil
        ) -> Result<ResponsePayload, RPCError> {
            .failure(RPCError(code: code, message: message, headers: headers, trailers: trailers, cause: cause))
        }

        let contentType = response.headers.first { $0.name == "content-type" }?.value
        let statusText = trailers.firstString(forKey: "grpc-status")
        // Equality first: it compares the bytes of two ASCII strings, where `hasPrefix` compares
        // characters (about 120 instructions), and servers nearly always send exactly this.
        if let contentType, contentType != "application/grpc", !contentType.hasPrefix("application/grpc") {
            return failure(
                httpStatusCode(response.status),
                "unexpected content-type '\(contentType)' (HTTP status \(response.status))"
            )
        }
        guard let statusText else {
            let detail = contentType.map { "content-type '\($0)'" } ?? "no content-type"
            return failure(
                httpStatusCode(response.status),
                "HTTP status \(response.status) (\(detail)) without grpc-status"
            )
        }
        let message = trailers.firstString(forKey: "grpc-message").map(PercentEncoding.decodeMessage) ?? ""
        guard let code = StatusCode(grpcStatus: statusText) else {
            return failure(.unknown, "invalid grpc-status '\(statusText)'" + (message.isEmpty ? "" : ": \(message)"))
        }
        guard code == .ok else {
            return failure(code, message)
        }

        switch Framing.singleMessage(in: response.body, limit: maxMessageBytes) {
        case .failure(.noMessage):
            return failure(
                .unimplemented,
                "the server answered OK without a response message (a unary call needs exactly one)"
            )
        case .failure(.moreThanOneMessage):
            return failure(.unimplemented, "the server sent more than one response message to a unary call")
        case .failure(.truncated(let expected, let received)):
            return failure(.internalError, "the response message was cut short (\(received) of \(expected) bytes)")
        case .failure(.tooLarge(let length, let limit)):
            return failure(
                .resourceExhausted,
                "response message of \(length) bytes is larger than the limit of \(limit) bytes"
            )
        case .failure(.invalidFlag(let flag)):
            return failure(.internalError, "invalid compressed flag \(flag) in the response message prefix")
        case .success(let framed):
            var bytes = framed.bytes
            if framed.compressed {
                let encoding = headers.firstString(forKey: "grpc-encoding") ?? "identity"
                guard encoding != "identity" else {
                    return failure(
                        .internalError,
                        "the response message is flagged compressed but no grpc-encoding was sent"
                    )
                }
                guard let algorithm = CompressionAlgorithm(rawValue: encoding) else {
                    return failure(.internalError, "the response uses unsupported grpc-encoding '\(encoding)'")
                }
                do throws(ContentCoding.Failure) {
                    bytes = ArraySlice(try algorithm.coding.decompress(bytes, limit: maxMessageBytes))
                } catch .tooLarge(let limit) {
                    return failure(
                        .resourceExhausted,
                        "decompressed response message is larger than the limit of \(limit) bytes"
                    )
                } catch {
                    return failure(.internalError, "could not decompress the response message (\(encoding)): \(error)")
                }
            }
            return .success(
                ResponsePayload(
                    messageBytes: bytes,
                    messageWasCompressed: framed.compressed,
                    headers: headers,
                    trailers: trailers
                )
            )
        }
    }

    /// gRPC's HTTP-to-status mapping, used only when `grpc-status` is absent.
    static func httpStatusCode(_ status: Int) -> StatusCode {
        switch status {
        case 400, 431: return .internalError
        case 401: return .unauthenticated
        case 403: return .permissionDenied
        case 404: return .unimplemented
        case 429, 502, 503, 504: return .unavailable
        default: return .unknown
        }
    }
}

/// An OK answer whose message is not parsed yet.
@usableFromInline
struct ResponsePayload {
    /// The message, unframed and decompressed.
    @usableFromInline var messageBytes: ArraySlice<UInt8>
    /// Whether the message's compressed flag was set.
    @usableFromInline var messageWasCompressed: Bool
    @usableFromInline var headers: Metadata
    @usableFromInline var trailers: Metadata

    /// The answer with its message parsed.
    @inlinable
    func decode<Deserializer: MessageDeserializer>(
        _ deserializer: Deserializer
    ) -> Result<UnaryResponse<Deserializer.Message>, RPCError> {
        do {
            let decoded = try deserializer.deserialize(messageBytes)
            return .success(
                UnaryResponse(
                    message: decoded,
                    headers: headers,
                    trailers: trailers,
                    messageWasCompressed: messageWasCompressed
                )
            )
        } catch {
            return .failure(
                RPCError(
                    code: .internalError,
                    message: "could not parse the response message: \(error)",
                    headers: headers,
                    trailers: trailers,
                    cause: error
                )
            )
        }
    }
}
