import AuthSampleService
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import GRPCProtobuf

// Usage: BenchServer CERT.pem KEY.pem
// Serves grpc.testing.TestService/UnaryCall on 127.0.0.1 over h2c and over TLS (ports chosen by
// the system), prints `BENCH SERVER READY <h2c port> <tls port>`, and runs until stdin closes.

/// UnaryCall: answers `response_size` zero bytes; nothing else (no auth check, no sleep).
struct UnaryCallService: RegistrableRPCService {
    static let method = GRPCCore.MethodDescriptor(
        fullyQualifiedService: "grpc.testing.TestService",
        method: "UnaryCall"
    )

    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        router.registerHandler(
            forMethod: Self.method,
            deserializer: ProtobufDeserializer<Grpc_Testing_SimpleRequest>(),
            serializer: ProtobufSerializer<Grpc_Testing_SimpleResponse>()
        ) { request, _ in
            var answer: Grpc_Testing_SimpleResponse?
            for try await message in request.messages {
                var response = Grpc_Testing_SimpleResponse()
                response.payload.body = Data(count: Int(message.responseSize))
                answer = response
            }
            let response = answer ?? Grpc_Testing_SimpleResponse()
            return StreamingServerResponse(single: ServerResponse(message: response))
        }
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: BenchServer CERT.pem KEY.pem\n".utf8))
    exit(2)
}
// Room for 10,000 calls in flight, advertised so clients queue rather than have streams refused;
// windows larger than a 4 MiB message, and room for 4 MiB requests.
var config = HTTP2ServerTransport.Posix.Config.defaults
config.http2.maxConcurrentStreams = 16384
config.http2.targetWindowSize = 16 << 20
config.rpc.maxRequestPayloadSize = 64 << 20
let plaintext = GRPCServer(
    transport: .http2NIOPosix(
        address: .ipv4(host: "127.0.0.1", port: 0),
        transportSecurity: .plaintext,
        config: config
    ),
    services: [UnaryCallService()]
)
let tls = GRPCServer(
    transport: .http2NIOPosix(
        address: .ipv4(host: "127.0.0.1", port: 0),
        transportSecurity: .tls(
            certificateChain: [.file(path: arguments[1], format: .pem)],
            privateKey: .file(path: arguments[2], format: .pem)
        ),
        config: config
    ),
    services: [UnaryCallService()]
)

try await withThrowingDiscardingTaskGroup { group in
    group.addTask { try await plaintext.serve() }
    group.addTask { try await tls.serve() }
    guard let h2c = try await plaintext.listeningAddress?.ipv4?.port,
        let secure = try await tls.listeningAddress?.ipv4?.port
    else {
        throw CancellationError()
    }
    print("BENCH SERVER READY \(h2c) \(secure)")
    fflush(nil)
    // The parent holds our stdin: when it goes away, so do we. A thread of its own, so the
    // blocking read never takes one of the server's cooperative threads.
    Thread.detachNewThread {
        while !FileHandle.standardInput.availableData.isEmpty {}
        exit(0)
    }
}
