import AuthRPC
import Foundation
import TestSupport
import Testing

@Suite("What a call puts on the wire")
struct RequestOnTheWireTests {
    @Test(
        "headers in the conformance order: pseudo-headers, grpc-timeout, te, content-type, accept-encoding, user-agent, authorization, metadata"
    )
    func headerOrder() async throws {
        let channel = try await FaultChannel.make()
        var options = CallOptions(
            timeout: .seconds(30),
            credentials: .accessToken("tok-123"),
            allowsInsecureCredentials: true
        )
        options.initialMetadata.addString("v1", forKey: "x-first")
        options.initialMetadata.addBinary([0xFF, 0xFE], forKey: "x-data-bin")
        options.initialMetadata.addString("v2", forKey: "x-first")
        let echoed = try await FaultChannel.echoRequest(channel, options: options)
        let names = echoed.fields.map(\.name)
        #expect(
            names == [
                ":method", ":scheme", ":path", ":authority", "grpc-timeout", "te", "content-type",
                "grpc-accept-encoding", "user-agent", "authorization", "x-first", "x-data-bin", "x-first",
            ]
        )
        #expect(echoed.values(":method") == ["POST"])
        #expect(echoed.values(":scheme") == ["http"])
        #expect(echoed.values(":path") == ["/fault.Fault/EchoRequest"])
        #expect(echoed.values("te") == ["trailers"])
        #expect(echoed.values("content-type") == ["application/grpc"])
        #expect(echoed.values("grpc-accept-encoding") == ["identity,deflate,gzip"])
        #expect(echoed.values("user-agent").first?.hasPrefix("grpc-swift-authrpc/") == true)
        #expect(echoed.values("authorization") == ["Bearer tok-123"])
        #expect(echoed.values("x-first") == ["v1", "v2"])
        #expect(echoed.values("x-data-bin") == ["//4"], "binary metadata goes unpadded")
        // grpc-timeout: at most 8 digits and a unit, and no more than the 30 s allowed.
        let timeout = try #require(echoed.values("grpc-timeout").first)
        #expect(timeout.count <= 9 && "HMSmun".contains(timeout.last!))
        #expect(timeout.dropLast().allSatisfy { $0.isNumber })
        #expect(timeout.hasSuffix("u") && Int(timeout.dropLast())! <= 30_000_000)
        // The body is exactly one uncompressed frame.
        #expect(echoed.body == [0, 0, 0, 0, 5] + Array("hello".utf8))
    }

    @Test(
        "calls in a row on one connection carry exactly their own fields (the I/O thread lays every call's out in one reused buffer)"
    )
    func consecutiveCallsKeepTheirOwnFields() async throws {
        let channel = try await FaultChannel.make()
        let plainNames = [
            ":method", ":scheme", ":path", ":authority", "te", "content-type", "grpc-accept-encoding", "user-agent",
        ]
        // Larger than the buffer the connection keeps between submits, then nothing, then a little.
        var big = CallOptions()
        big.initialMetadata.addString(String(repeating: "b", count: 6000), forKey: "x-big")
        var small = CallOptions(authority: "other.example.com")
        small.initialMetadata.addString("s", forKey: "x-small")
        let first = try await FaultChannel.echoRequest(channel, options: big)
        let second = try await FaultChannel.echoRequest(channel)
        let third = try await FaultChannel.echoRequest(channel, options: small)
        #expect(first.fields.map(\.name) == plainNames + ["x-big"])
        #expect(first.values("x-big") == [String(repeating: "b", count: 6000)])
        #expect(second.fields.map(\.name) == plainNames)
        #expect(third.fields.map(\.name) == plainNames + ["x-small"])
        #expect(third.values(":authority") == ["other.example.com"])
        #expect(third.values("x-small") == ["s"])
        #expect(second.body == [0, 0, 0, 0, 5] + Array("hello".utf8))
    }

    @Test("no deadline, no grpc-timeout; authority and user-agent prefix are the caller's")
    func noDeadline() async throws {
        let channel = try await FaultChannel.make()
        let options = CallOptions(authority: "api.example.com", userAgentPrefix: "myapp/2.1")
        let echoed = try await FaultChannel.echoRequest(channel, options: options)
        #expect(echoed.values("grpc-timeout").isEmpty)
        #expect(echoed.values(":authority") == ["api.example.com"])
        #expect(echoed.values("user-agent") == ["myapp/2.1 \(Channel.userAgent)"])
        #expect(echoed.values("authorization").isEmpty)
    }

    @Test("a static token and a token provider produce the same header; the credentials replace caller metadata")
    func bothCredentialForms() async throws {
        let channel = try await FaultChannel.make()
        var staticOptions = CallOptions(allowsInsecureCredentials: true)
        staticOptions.oauth2AccessToken = "same-token"
        staticOptions.initialMetadata.addString("Basic c3RhbGU=", forKey: "authorization")
        var providerOptions = CallOptions(allowsInsecureCredentials: true)
        providerOptions.authTokenProvider = ScriptedProvider(.answer("same-token"))
        #expect(providerOptions.oauth2AccessToken == nil, "setting the provider cleared the static token")
        let fromStatic = try await FaultChannel.echoRequest(channel, options: staticOptions)
        let fromProvider = try await FaultChannel.echoRequest(channel, options: providerOptions)
        #expect(fromStatic.values("authorization") == ["Bearer same-token"])
        #expect(fromProvider.values("authorization") == ["Bearer same-token"])
    }

    @Test("compressed requests carry grpc-encoding and a flagged gzip frame")
    func compressedRequest() async throws {
        let channel = try await FaultChannel.make()
        let message = Array(String(repeating: "squeeze ", count: 200).utf8)
        let echoed = try await FaultChannel.echoRequest(
            channel,
            message: message,
            options: CallOptions(compression: .gzip)
        )
        #expect(echoed.values("grpc-encoding") == ["gzip"])
        #expect(echoed.body.first == 1)
        #expect(Array(echoed.body[5..<7]) == [0x1F, 0x8B])
        #expect(echoed.body.count < message.count)
    }

    @Test(
        "tokens never go out on plaintext without the opt-in: the call fails UNAUTHENTICATED and nothing is sent",
        arguments: ["static", "provider", "metadata"]
    )
    func plaintextRefusal(form: String) async throws {
        let channel = try await FaultChannel.make()
        let tag = FaultChannel.newTag()
        var options = FaultChannel.tagged(tag)
        let provider = ScriptedProvider(.answer("secret-token"))
        switch form {
        case "static": options.oauth2AccessToken = "secret-token"
        case "provider": options.authTokenProvider = provider
        default: options.initialMetadata.addString("Bearer secret-token", forKey: "authorization")
        }
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(channel, "Echo", options: options)
        }
        #expect(error?.code == .unauthenticated)
        #expect(error?.message.contains("plaintext") == true)
        #expect(error?.description.contains("secret-token") == false)
        #expect(provider.tokenCalls == 0, "the provider is not even asked")
        let events = try await FaultChannel.events(channel, tag: tag)
        #expect(!FaultChannel.sawRequest(events), "\(events)")
    }

    @Test("invalid metadata is refused before anything is sent")
    func invalidMetadataNotSent() async throws {
        let channel = try await FaultChannel.make()
        let tag = FaultChannel.newTag()
        var options = FaultChannel.tagged(tag)
        options.initialMetadata.addString("v", forKey: "Bad-Key")
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(channel, "Echo", options: options)
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("Bad-Key") == true)
        #expect(!FaultChannel.sawRequest(try await FaultChannel.events(channel, tag: tag)))
    }

    @Test("a header list over the server's limit fails RESOURCE_EXHAUSTED without being sent")
    func headerListTooLarge() async throws {
        let channel = try await FaultChannel.make("h2c_small_header_list")
        var options = CallOptions()
        options.initialMetadata.addString(String(repeating: "x", count: 2000), forKey: "x-big")
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(channel, "Echo", options: options)
        }
        #expect(error?.code == .resourceExhausted)
        #expect(try await FaultChannel.call(channel, "Echo").message == Array("hello".utf8))
    }
}
