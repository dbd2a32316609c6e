/// A successful unary call: the response message and the metadata that came with it.
public struct UnaryResponse<Message: Sendable>: Sendable {
    /// The response message.
    public var message: Message
    /// The response headers (the initial metadata), in received order.
    public var headers: Metadata
    /// The trailers (`grpc-status` and `grpc-message` included), in received order.
    public var trailers: Metadata
    /// Whether the response message arrived compressed: the compressed flag of its gRPC message
    /// prefix was set (the message was then decompressed with the response's `grpc-encoding`).
    /// Interop's `server_compressed_unary` checks it; `grpc-encoding` alone does not say, since a
    /// server may name an encoding and still send a message uncompressed.
    public var messageWasCompressed: Bool

    /// Creates a response whose message did not arrive compressed.
    public init(message: Message, headers: Metadata, trailers: Metadata) {
        self.init(message: message, headers: headers, trailers: trailers, messageWasCompressed: false)
    }

    /// Creates a response, saying whether its message arrived compressed.
    public init(message: Message, headers: Metadata, trailers: Metadata, messageWasCompressed: Bool) {
        self.message = message
        self.headers = headers
        self.trailers = trailers
        self.messageWasCompressed = messageWasCompressed
    }
}
