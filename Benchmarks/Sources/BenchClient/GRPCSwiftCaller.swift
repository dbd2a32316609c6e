import AuthSampleService
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import GRPCProtobuf

/// grpc-swift-2 with its NIO HTTP/2 transport: one `GRPCClient`, the same token in metadata.
final class GRPCSwiftCaller: UnaryCaller {
    private let client: GRPCClient<HTTP2ClientTransport.Posix>
    private let runner: Task<Void, any Error>
    private let request: ClientRequest<Grpc_Testing_SimpleRequest>
    private static let method = GRPCCore.MethodDescriptor(fullyQualifiedService: "grpc.testing.TestService", method: "UnaryCall")

    init(_ setup: BenchSetup) throws {
        let security: HTTP2ClientTransport.Posix.TransportSecurity = setup.tls
            ? .tls { config in
                config.trustRoots = .certificates([.file(path: setup.caPath, format: .pem)])
            }
            : .plaintext
        let target: any ResolvableTarget = setup.tls ? .dns(host: "localhost", port: setup.port) : .ipv4(address: "127.0.0.1", port: setup.port)
        let client = GRPCClient(transport: try .http2NIOPosix(target: target, transportSecurity: security))
        self.client = client
        runner = Task { try await client.runConnections() }
        request = ClientRequest(message: setup.request, metadata: ["authorization": "Bearer \(BenchSetup.token)"])
    }

    func call() async throws {
        var options = CallOptions.defaults
        options.timeout = .seconds(60)
        _ = try await client.unary(
            request: request, descriptor: Self.method,
            serializer: ProtobufSerializer<Grpc_Testing_SimpleRequest>(),
            deserializer: ProtobufDeserializer<Grpc_Testing_SimpleResponse>(),
            options: options
        ) { try $0.message }
    }

    func shutdown() async {
        client.beginGracefulShutdown()
        _ = try? await runner.value
    }
}
