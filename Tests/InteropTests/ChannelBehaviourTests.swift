import AuthRPC
import AuthSampleService
import Foundation
import TestSupport
import Testing

@Suite("Channel behaviour against grpcio")
struct ChannelBehaviourTests {
    @Test("1,000 concurrent unary calls on one Channel all succeed over one TCP connection")
    func thousandConcurrentCalls() async throws {
        // A sandbox of its own, so this burst does not queue other suites' calls behind it.
        let sandbox = try await Peers.launchSandbox(["--static-token", Peers.staticToken], name: "sandbox-1000-calls")
        defer { sandbox.process.stop() }
        let channel = try await SandboxChannel.tls(sandbox: sandbox)
        let client = Grpc_Testing_TestServiceClient(channel: channel)
        var echoing = channel.defaultCallOptions
        echoing.initialMetadata.addString("1", forKey: "x-sandbox-echo-headers")
        let options = echoing
        let peers = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<1000 {
                group.addTask {
                    var request = Grpc_Testing_SimpleRequest()
                    request.responseSize = 10
                    let response = try await client.unaryCall(request, options: options)
                    return response.trailers.firstString(forKey: "x-sandbox-peer") ?? "?"
                }
            }
            var peers: Set<String> = []
            for try await peer in group { peers.insert(peer) }
            return peers
        }
        // The server saw every call come from one client address and port: one connection.
        #expect(peers.count == 1, "\(peers)")
        #expect(!peers.contains("?"))
    }

    @Test("a missing token over TLS is UNAUTHENTICATED with the server's www-authenticate challenge")
    func missingToken() async throws {
        let client = AuthSample_TestServiceClient(channel: try await SandboxChannel.tls(credentials: nil))
        let error = await #expect(throws: RPCError.self) { try await client.unaryCall(AuthSample_Request()) }
        #expect(error?.code == .unauthenticated)
        #expect(error?.trailers.firstString(forKey: "www-authenticate")?.hasPrefix("Bearer") == true)
    }

    @Test("a wrong token is UNAUTHENTICATED with an invalid_token challenge")
    func wrongToken() async throws {
        let client = AuthSample_TestServiceClient(
            channel: try await SandboxChannel.tls(credentials: .accessToken("wrong-token"))
        )
        let error = await #expect(throws: RPCError.self) { try await client.unaryCall(AuthSample_Request()) }
        #expect(error?.code == .unauthenticated)
        #expect(error?.trailers.firstString(forKey: "www-authenticate")?.contains("invalid_token") == true)
        #expect(!(error?.description.contains("wrong-token") ?? true))
    }

    @Test("an untrusted server certificate fails UNAVAILABLE, naming the cause")
    func untrustedCertificate() async throws {
        let client = Grpc_Testing_TestServiceClient(channel: try await SandboxChannel.tls(trustSandboxCA: false))
        let error = await #expect(throws: RPCError.self) { try await client.emptyCall() }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("certificate not trusted") == true, "\(String(describing: error))")
        #expect((error?.cause as? TransportError)?.kind == .untrustedCertificate)
    }

    @Test("a certificate for another name fails UNAVAILABLE with 'hostname mismatch'")
    func hostnameMismatch() async throws {
        let client = Grpc_Testing_TestServiceClient(channel: try await SandboxChannel.tls(serverName: "wrong.example"))
        let error = await #expect(throws: RPCError.self) { try await client.emptyCall() }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("hostname mismatch") == true, "\(String(describing: error))")
        #expect((error?.cause as? TransportError)?.kind == .hostnameMismatch)
    }

    @Test("the user agent is the library's, after the caller's prefix")
    func userAgent() async throws {
        let channel = try await SandboxChannel.tls()
        var options = channel.defaultCallOptions
        options.userAgentPrefix = "interop-tests/1.0"
        options.initialMetadata.addString("1", forKey: "x-sandbox-echo-headers")
        let response = try await Grpc_Testing_TestServiceClient(channel: channel).emptyCall(options: options)
        let userAgent = response.trailers.firstString(forKey: "x-sandbox-user-agent") ?? ""
        #expect(userAgent.hasPrefix("interop-tests/1.0 grpc-swift-authrpc/"), "\(userAgent)")
    }

    @Test("calls on a closed channel fail UNAVAILABLE")
    func closeThenCallFails() async throws {
        let channel = try await SandboxChannel.tls()
        let client = Grpc_Testing_TestServiceClient(channel: channel)
        _ = try await client.emptyCall()
        channel.close()
        let error = await #expect(throws: RPCError.self) { try await client.emptyCall() }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("closed") == true)
    }
}
