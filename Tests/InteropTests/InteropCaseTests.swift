import AuthRPC
import AuthSampleService
import Foundation
import TestSupport
import Testing

/// gRPC's interop test cases (interop-test-descriptions.md) against grpcio over TLS with the
/// sandbox's generated CA, each asserting what the description asserts.
@Suite("Interop cases against grpcio over TLS")
struct InteropCaseTests {
    @Test("empty_unary: EmptyCall returns an empty message")
    func emptyUnary() async throws {
        let client = Grpc_Testing_TestServiceClient(channel: try await SandboxChannel.tls())
        let response = try await client.emptyCall()
        #expect(response.message == Grpc_Testing_Empty())
        #expect(response.trailers.firstString(forKey: "grpc-status") == "0")
    }

    @Test("large_unary: a 271828-byte request gets a 314159-byte payload back")
    func largeUnary() async throws {
        let client = Grpc_Testing_TestServiceClient(channel: try await SandboxChannel.tls())
        var request = Grpc_Testing_SimpleRequest()
        request.responseSize = 314_159
        request.payload.body = Data(count: 271_828)
        let response = try await client.unaryCall(request)
        #expect(response.message.payload.type == .compressable)
        #expect(response.message.payload.body == Data(count: 314_159))
    }

    @Test("status_code_and_message: the echoed status comes back on EmptyCall-style unary")
    func statusCodeAndMessage() async throws {
        let client = Grpc_Testing_TestServiceClient(channel: try await SandboxChannel.tls())
        var request = Grpc_Testing_SimpleRequest()
        request.responseStatus.code = 2
        request.responseStatus.message = "test status message"
        let error = await #expect(throws: RPCError.self) { try await client.unaryCall(request) }
        #expect(error?.code == .unknown)
        #expect(error?.message == "test status message")
    }

    @Test("special_status_message: whitespace and Unicode survive percent-encoding exactly")
    func specialStatusMessage() async throws {
        let client = Grpc_Testing_TestServiceClient(channel: try await SandboxChannel.tls())
        let message = "\t\ntest with whitespace\r\nand Unicode BMP ☺ and non-BMP 😈\t\n"
        var request = Grpc_Testing_SimpleRequest()
        request.responseStatus.code = 2
        request.responseStatus.message = message
        let error = await #expect(throws: RPCError.self) { try await client.unaryCall(request) }
        #expect(error?.code == .unknown)
        #expect(error?.message == message)
    }

    @Test("unimplemented_method: TestService/UnimplementedCall is UNIMPLEMENTED")
    func unimplementedMethod() async throws {
        let client = Grpc_Testing_TestServiceClient(channel: try await SandboxChannel.tls())
        let error = await #expect(throws: RPCError.self) { try await client.unimplementedCall() }
        #expect(error?.code == .unimplemented)
    }

    @Test("unimplemented_service: UnimplementedService/UnimplementedCall is UNIMPLEMENTED")
    func unimplementedService() async throws {
        let client = Grpc_Testing_UnimplementedServiceClient(channel: try await SandboxChannel.tls())
        let error = await #expect(throws: RPCError.self) { try await client.unimplementedCall() }
        #expect(error?.code == .unimplemented)
    }

    @Test("custom_metadata: initial metadata echoes in headers, -bin trailing metadata in trailers")
    func customMetadata() async throws {
        let client = Grpc_Testing_TestServiceClient(channel: try await SandboxChannel.tls())
        var options = try await SandboxChannel.tls().defaultCallOptions
        options.initialMetadata.addString("test_initial_metadata_value", forKey: "x-grpc-test-echo-initial")
        options.initialMetadata.addBinary([0xAB, 0xAB, 0xAB], forKey: "x-grpc-test-echo-trailing-bin")
        var request = Grpc_Testing_SimpleRequest()
        request.responseSize = 314_159
        request.payload.body = Data(count: 271_828)
        let response = try await client.unaryCall(request, options: options)
        #expect(response.headers.firstString(forKey: "x-grpc-test-echo-initial") == "test_initial_metadata_value")
        #expect(response.trailers.firstBinary(forKey: "x-grpc-test-echo-trailing-bin") == [0xAB, 0xAB, 0xAB])

        // The same on a failing call: the metadata arrives with the error.
        request.responseStatus.code = 2
        request.responseStatus.message = "fail"
        let error = await #expect(throws: RPCError.self) { try await client.unaryCall(request, options: options) }
        #expect(error?.trailers.firstBinary(forKey: "x-grpc-test-echo-trailing-bin") == [0xAB, 0xAB, 0xAB])
    }

    @Test(
        "custom_metadata on one connection: each call reads its own headers and trailers, however they differ from the last call's"
    )
    func customMetadataRepeated() async throws {
        // One channel, one connection: the client compares each response's blocks with the last
        // ones its server sent, and must never answer with another call's fields.
        let channel = try await SandboxChannel.tls()
        let client = Grpc_Testing_TestServiceClient(channel: channel)
        let plain = channel.defaultCallOptions
        func echoing(_ initial: String, trailing: [UInt8]) -> CallOptions {
            var options = plain
            options.initialMetadata.addString(initial, forKey: "x-grpc-test-echo-initial")
            options.initialMetadata.addBinary(trailing, forKey: "x-grpc-test-echo-trailing-bin")
            return options
        }
        let plainHeaders = try await client.unaryCall(Grpc_Testing_SimpleRequest(), options: plain).headers
        let calls: [(initial: String, trailing: [UInt8])?] = [
            nil, ("a", [1]), ("a", [1]), ("b", [1]), ("b", [2, 2]), nil, nil, ("a", [1]), nil,
        ]
        for (index, call) in calls.enumerated() {
            let options = call.map { echoing($0.initial, trailing: $0.trailing) } ?? plain
            let response = try await client.unaryCall(Grpc_Testing_SimpleRequest(), options: options)
            #expect(response.headers.firstString(forKey: "x-grpc-test-echo-initial") == call?.initial, "call \(index)")
            #expect(response.headers.count == plainHeaders.count + (call == nil ? 0 : 1), "call \(index)")
            #expect(
                response.trailers.firstBinary(forKey: "x-grpc-test-echo-trailing-bin") == call?.trailing,
                "call \(index)"
            )
            #expect(response.trailers.firstString(forKey: "grpc-status") == "0", "call \(index)")
        }
        // A failing call between them: its status and message are its own, and the next success's too.
        var failing = Grpc_Testing_SimpleRequest()
        failing.responseStatus.code = 2
        failing.responseStatus.message = "fail"
        for _ in 0..<2 {
            let error = await #expect(throws: RPCError.self) { try await client.unaryCall(failing, options: plain) }
            #expect(error?.code == .unknown)
            #expect(error?.message == "fail")
            #expect(error?.trailers.firstString(forKey: "grpc-status") == "2")
            let response = try await client.unaryCall(
                Grpc_Testing_SimpleRequest(),
                options: echoing("c", trailing: [3])
            )
            #expect(response.headers.firstString(forKey: "x-grpc-test-echo-initial") == "c")
            #expect(response.trailers.firstBinary(forKey: "x-grpc-test-echo-trailing-bin") == [3])
        }
    }

    @Test("timeout_on_sleeping_server: a call to a server that sleeps past the deadline is DEADLINE_EXCEEDED")
    func timeoutOnSleepingServer() async throws {
        let client = Grpc_Testing_TestServiceClient(channel: try await SandboxChannel.tls())
        var options = CallOptions(timeout: .milliseconds(200), credentials: .accessToken(Peers.staticToken))
        options.initialMetadata.addString("3000", forKey: "x-sandbox-sleep-ms")
        let error = await #expect(throws: RPCError.self) {
            try await client.unaryCall(Grpc_Testing_SimpleRequest(), options: options)
        }
        #expect(error?.code == .deadlineExceeded)
    }

    @Test("oauth2_auth_token: a static token is sent; username and scope come back")
    func oauth2AuthToken() async throws {
        let sandbox = try await Peers.sandbox()
        let client = AuthSample_TestServiceClient(
            channel: try await SandboxChannel.tls(credentials: .accessToken(Peers.staticToken))
        )
        var request = AuthSample_Request()
        request.fillUsername = true
        request.fillOauthScope = true
        let response = try await client.unaryCall(request)
        #expect(response.message.username == sandbox.user)
        #expect(!response.message.oauthScope.isEmpty)
        #expect(SandboxChannel.testScope.contains(response.message.oauthScope))
    }

    @Test("per_rpc_creds: a token provider is asked once per call; username and scope come back")
    func perRPCCreds() async throws {
        let sandbox = try await Peers.sandbox()
        let provider = CountingProvider(token: Peers.staticToken)
        let client = AuthSample_TestServiceClient(
            channel: try await SandboxChannel.tls(credentials: .provider(provider))
        )
        var request = AuthSample_Request()
        request.fillUsername = true
        request.fillOauthScope = true
        for call in 1...3 {
            let response = try await client.unaryCall(request)
            #expect(response.message.username == sandbox.user)
            #expect(SandboxChannel.testScope.contains(response.message.oauthScope))
            #expect(provider.callCount == call)
        }
    }

    @Test("server_compressed_unary: a gzip-compressed response is decompressed and says it was compressed")
    func serverCompressed() async throws {
        let client = Grpc_Testing_TestServiceClient(channel: try await SandboxChannel.tls())
        var request = Grpc_Testing_SimpleRequest()
        request.responseSize = 314_159
        request.responseCompressed.value = true
        let response = try await client.unaryCall(request)
        #expect(response.message.payload.body == Data(count: 314_159))
        #expect(response.headers.firstString(forKey: "grpc-encoding") == "gzip")
        #expect(response.messageWasCompressed)

        request.responseCompressed.value = false
        let uncompressed = try await client.unaryCall(request)
        #expect(uncompressed.message.payload.body == Data(count: 314_159))
        #expect(!uncompressed.messageWasCompressed)
    }

    @Test(
        "client_compressed_unary: gzip and deflate requests are accepted by grpcio",
        arguments: CompressionAlgorithm.allCases
    )
    func clientCompressed(algorithm: CompressionAlgorithm) async throws {
        let client = Grpc_Testing_TestServiceClient(channel: try await SandboxChannel.tls())
        var options = CallOptions(credentials: .accessToken(Peers.staticToken), compression: algorithm)
        options.maxResponseMessageBytes = 1 << 20
        var request = Grpc_Testing_SimpleRequest()
        request.responseSize = 314_159
        request.payload.body = Data(count: 271_828)
        request.expectCompressed.value = true
        let response = try await client.unaryCall(request, options: options)
        #expect(response.message.payload.body.count == 314_159)
    }
}
