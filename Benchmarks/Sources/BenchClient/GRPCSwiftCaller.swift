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
    private let heldRequest: ClientRequest<Grpc_Testing_SimpleRequest>
    private let options: GRPCCore.CallOptions
    private static let method = GRPCCore.MethodDescriptor(
        fullyQualifiedService: "grpc.testing.TestService",
        method: "UnaryCall"
    )
    private static let metadata: GRPCCore.Metadata = ["authorization": "Bearer \(BenchSetup.token)"]

    init(_ setup: BenchSetup) throws {
        let security: HTTP2ClientTransport.Posix.TransportSecurity =
            setup.tls
            ? .tls { config in
                config.trustRoots = .certificates([.file(path: setup.caPath, format: .pem)])
            }
            : .plaintext
        let target: any ResolvableTarget =
            setup.tls ? .dns(host: "localhost", port: setup.port) : .ipv4(address: "127.0.0.1", port: setup.port)
        let client = GRPCClient(transport: try .http2NIOPosix(target: target, transportSecurity: security))
        self.client = client
        runner = Task { try await client.runConnections() }
        let message = setup.makeRequest()
        request = ClientRequest(message: message, metadata: Self.metadata)
        var held = Self.metadata
        held.addString("1", forKey: BenchSetup.holdKey)
        heldRequest = ClientRequest(message: message, metadata: held)
        var options = GRPCCore.CallOptions.defaults
        options.timeout = .seconds(120)
        options.maxRequestMessageBytes = BenchSetup.maxMessageBytes
        options.maxResponseMessageBytes = BenchSetup.maxMessageBytes
        self.options = options
    }

    nonisolated(nonsending) func call() async throws {
        _ = try await unary(request)
    }

    func heldCall() async throws {
        _ = try await unary(heldRequest)
    }

    func control(_ command: String) async throws -> Int {
        var metadata = Self.metadata
        metadata.addString(command, forKey: BenchSetup.controlKey)
        let answer = try await unary(ClientRequest(message: Grpc_Testing_SimpleRequest(), metadata: metadata)).username
        guard let count = Int(answer) else {
            throw BenchFailure(description: "the server answered \(command) with \(answer.debugDescription)")
        }
        return count
    }

    private func unary(_ request: ClientRequest<Grpc_Testing_SimpleRequest>) async throws -> Grpc_Testing_SimpleResponse
    {
        try await client.unary(
            request: request,
            descriptor: Self.method,
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
