import AuthRPC
import AuthRPCSystem
import AuthRPCTransport
import Foundation
import TestSupport
import Testing

/// A token provider may learn which call a token is for (its `:authority` and method) and add
/// request metadata of its own; providers that know only `token()` work as before.
@Suite("Token providers: the call's context and metadata of their own")
struct ProviderCallContextTests {
    /// Answers per call context, records every context it was asked for, adds `metadata`.
    final class ContextProvider: AuthTokenProvider {
        let metadata: Metadata
        let cached: String?
        private let contexts = Locked<[AuthTokenContext]>([])
        private let plainCalls = Locked(0)

        init(metadata: Metadata = [:], cached: String? = nil) {
            self.metadata = metadata
            self.cached = cached
        }

        var askedFor: [AuthTokenContext] { contexts.withLock { $0 } }
        var tokenCalls: Int { plainCalls.withLock { $0 } }

        func token() async throws -> String {
            plainCalls.withLock { $0 += 1 }
            return "plain-token"
        }

        func token(for context: AuthTokenContext) async throws -> String {
            contexts.withLock { $0.append(context) }
            return "token-for-" + context.authority.replacingOccurrences(of: ":", with: "-")
        }

        func cachedToken(for context: AuthTokenContext) -> String? { cached }

        var requestMetadata: Metadata { metadata }
    }

    private func options(_ provider: any AuthTokenProvider) -> CallOptions {
        CallOptions(credentials: .provider(provider), allowsInsecureCredentials: true)
    }

    @Test(
        "a provider that wants the call gets its :authority (the channel's, or the call's override) and method, and token() is not used"
    )
    func contextReachesTheProvider() async throws {
        let faults = try await Peers.faultServer()
        let channel = try await FaultChannel.make()
        let provider = ContextProvider()
        let first = try await FaultChannel.echoRequest(channel, options: options(provider))
        var overridden = options(provider)
        overridden.authority = "api.example.com:8443"
        let second = try await FaultChannel.echoRequest(channel, options: overridden)

        let method = MethodDescriptor(service: "fault.Fault", method: "EchoRequest")
        #expect(
            provider.askedFor == [
                AuthTokenContext(authority: "\(faults.host):\(faults.port("h2c"))", method: method),
                AuthTokenContext(authority: "api.example.com:8443", method: method),
            ]
        )
        #expect(provider.tokenCalls == 0)
        #expect(first.values("authorization") == ["Bearer token-for-\(faults.host)-\(faults.port("h2c"))"])
        #expect(second.values("authorization") == ["Bearer token-for-api.example.com-8443"])
        #expect(second.values(":authority") == ["api.example.com:8443"])
    }

    @Test("a cached token for the call is sent without asking for one")
    func cachedTokenForTheCall() async throws {
        let channel = try await FaultChannel.make()
        let provider = ContextProvider(cached: "cached-token")
        let echoed = try await FaultChannel.echoRequest(channel, options: options(provider))
        #expect(echoed.values("authorization") == ["Bearer cached-token"])
        #expect(provider.askedFor.isEmpty && provider.tokenCalls == 0)
    }

    @Test("a provider that knows only token() is asked as before")
    func plainProvider() async throws {
        let channel = try await FaultChannel.make()
        let provider = ScriptedProvider(.answer("old-style"))
        let echoed = try await FaultChannel.echoRequest(channel, options: options(provider))
        #expect(echoed.values("authorization") == ["Bearer old-style"])
        #expect(provider.tokenCalls == 1)
    }

    @Test("the provider's metadata goes after the caller's; a key the caller set keeps the caller's value")
    func providerMetadataIsSent() async throws {
        let channel = try await FaultChannel.make()
        let provider = ContextProvider(metadata: [
            "x-goog-user-project": "billing-project", "x-shared": "from-provider", "x-trace-bin": .binary([1, 2]),
        ])
        var callOptions = options(provider)
        callOptions.initialMetadata.addString("from-caller", forKey: "x-shared")
        let echoed = try await FaultChannel.echoRequest(channel, options: callOptions)
        let names = echoed.fields.map(\.name)
        #expect(Array(names.suffix(3)) == ["x-shared", "x-goog-user-project", "x-trace-bin"], "\(names)")
        #expect(echoed.values("x-goog-user-project") == ["billing-project"])
        #expect(echoed.values("x-shared") == ["from-caller"])
        #expect(echoed.values("x-trace-bin") == ["AQI"])
        // Without the provider, none of it.
        let plain = try await FaultChannel.echoRequest(channel, options: CallOptions())
        #expect(plain.values("x-goog-user-project").isEmpty)
    }

    @Test("metadata a provider may not send fails INVALID_ARGUMENT before the token is asked for or anything is sent")
    func invalidProviderMetadata() async throws {
        let channel = try await FaultChannel.make()
        let cases: [Metadata] = [
            ["x-goog-user-project": "bad\r\nx-injected: 1"], ["Bad Key": "v"], ["grpc-status": "0"], ["te": "x"],
        ]
        for metadata in cases {
            let provider = ContextProvider(metadata: metadata)
            let tag = FaultChannel.newTag()
            let error = await #expect(throws: RPCError.self) {
                try await FaultChannel.call(channel, "Echo", options: FaultChannel.tagged(tag, options(provider)))
            }
            #expect(error?.code == .invalidArgument, "\(metadata)")
            #expect(provider.askedFor.isEmpty)
            #expect(!FaultChannel.sawRequest(try await FaultChannel.events(channel, tag: tag)))
        }
    }
}
