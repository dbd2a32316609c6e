import AuthRPC
import AuthRPCSystem
import Foundation
import TestSupport
import Testing

/// On a TLS channel, a call's `:authority` must be a name the server's verified certificate is
/// valid for; otherwise the call fails `unauthenticated` before any provider is asked and before
/// anything is sent. Against the fault server's TLS port, whose certificate (the sandbox's)
/// covers localhost, alias.sandbox.test, 127.0.0.1 and ::1.
@Suite("Audience binding: a call's authority is checked against the server's certificate")
struct AudienceBindingTests {
    /// A provider that counts every way it is asked, the cache included.
    final class CountingProvider: AuthTokenProvider {
        private let asked = Locked<[String]>([])

        var questions: [String] { asked.withLock { $0 } }

        func token() async throws -> String { "unused" }

        func token(for context: AuthTokenContext) async throws -> String {
            asked.withLock { $0.append("token \(context.authority)") }
            return "token-for-\(context.authority.prefix { $0 != ":" })"
        }

        func cachedToken(for context: AuthTokenContext) -> String? {
            asked.withLock { $0.append("cached \(context.authority)") }
            return nil
        }
    }

    private func tlsChannel(name: String = "localhost") async throws -> Channel {
        let faults = try await Peers.faultServer()
        let sandbox = try await Peers.sandbox()
        return try Channel(
            target: "\(name):\(faults.port("tls"))",
            transportSecurity: .tls(TLSConfiguration(trustRoots: .certificates(pem: sandbox.caCertificatePEM)))
        )
    }

    @Test(
        "a foreign authority fails unauthenticated: no provider asked, nothing sent",
        arguments: ["storage.googleapis.com", "storage.googleapis.com:443", "localhost.evil.test", "10.0.0.1", "[::2]"]
    )
    func foreignAuthority(authority: String) async throws {
        let channel = try await tlsChannel()
        let observer = try await FaultChannel.make()
        let provider = CountingProvider()
        let tag = FaultChannel.newTag()
        let options = FaultChannel.tagged(
            tag,
            CallOptions(timeout: .seconds(60), credentials: .provider(provider), authority: authority)
        )
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(channel, "EchoRequest", options: options)
        }
        #expect(error?.code == .unauthenticated)
        #expect(error?.message.contains("certificate") == true, "\(String(describing: error))")
        #expect(provider.questions.isEmpty)
        #expect(!FaultChannel.sawRequest(try await FaultChannel.events(observer, tag: tag)))
    }

    @Test("a static token is not sent under a foreign authority either")
    func staticToken() async throws {
        let channel = try await tlsChannel()
        let error = await #expect(throws: RPCError.self) {
            try await FaultChannel.call(
                channel,
                "EchoRequest",
                options: CallOptions(credentials: .accessToken("static"), authority: "storage.googleapis.com")
            )
        }
        #expect(error?.code == .unauthenticated)
    }

    @Test(
        "a name the certificate also covers works (virtual hosting), and its provider sees that authority",
        arguments: [
            "alias.sandbox.test", "alias.sandbox.test:8443", "ALIAS.Sandbox.test", "127.0.0.1", "[::1]:1", "localhost",
        ]
    )
    func coveredAuthority(authority: String) async throws {
        let channel = try await tlsChannel()
        let provider = CountingProvider()
        let echoed = try await FaultChannel.echoRequest(
            channel,
            options: CallOptions(timeout: .seconds(60), credentials: .provider(provider), authority: authority)
        )
        #expect(echoed.values(":authority") == [authority])
        #expect(provider.questions == ["cached \(authority)", "token \(authority)"])
        #expect(echoed.values("authorization") == ["Bearer token-for-\(authority.prefix { $0 != ":" })"])
    }

    @Test("the channel's own name needs no check, whatever its case; calls without an authority are unchanged")
    func channelName() async throws {
        let channel = try await tlsChannel(name: "127.0.0.1")
        let echoed = try await FaultChannel.echoRequest(channel, options: CallOptions(authority: "127.0.0.1:9"))
        #expect(echoed.values(":authority") == ["127.0.0.1:9"])
        let plain = try await FaultChannel.echoRequest(channel)
        #expect(plain.values(":authority").first?.hasPrefix("127.0.0.1:") == true)
    }

    @Test("over plaintext there is no certificate to check: the authority is sent as given")
    func plaintext() async throws {
        let channel = try await FaultChannel.make()
        let echoed = try await FaultChannel.echoRequest(channel, options: CallOptions(authority: "anything.example"))
        #expect(echoed.values(":authority") == ["anything.example"])
    }
}
