/// A successful unary call: the response message and the metadata that came with it.
public struct UnaryResponse<Message: Sendable>: Sendable {
    /// The response message.
    public var message: Message
    /// The response headers (the initial metadata), in received order.
    public var headers: Metadata
    /// The trailers (`grpc-status` and `grpc-message` included), in received order.
    public var trailers: Metadata

    /// Creates a response.
    public init(message: Message, headers: Metadata, trailers: Metadata) {
        self.message = message
        self.headers = headers
        self.trailers = trailers
    }
}
