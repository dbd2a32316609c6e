/// Names a method: `/package.Service/Method` on the wire.
public struct MethodDescriptor: Sendable, Hashable, CustomStringConvertible {
    /// The fully qualified service name (`grpc.testing.TestService`).
    public var service: String { didSet { path = Self.path(service: service, method: method) } }
    /// The method name (`UnaryCall`), case-sensitive.
    public var method: String { didSet { path = Self.path(service: service, method: method) } }

    /// The HTTP/2 `:path`, built once rather than on every call.
    public private(set) var path: String

    /// Creates a descriptor.
    public init(service: String, method: String) {
        self.service = service
        self.method = method
        self.path = Self.path(service: service, method: method)
    }

    private static func path(service: String, method: String) -> String { "/\(service)/\(method)" }

    /// The `:path`.
    public var description: String { path }
}
