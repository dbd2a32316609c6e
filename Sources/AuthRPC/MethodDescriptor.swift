/// Names a method: `/package.Service/Method` on the wire.
public struct MethodDescriptor: Sendable, Hashable, CustomStringConvertible {
    /// The fully qualified service name (`grpc.testing.TestService`).
    public var service: String
    /// The method name (`UnaryCall`), case-sensitive.
    public var method: String

    /// Creates a descriptor.
    public init(service: String, method: String) {
        self.service = service
        self.method = method
    }

    /// The HTTP/2 `:path`.
    public var path: String { "/\(service)/\(method)" }

    /// The `:path`.
    public var description: String { path }
}
