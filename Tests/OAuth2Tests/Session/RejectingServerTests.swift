import AuthRPC
import Foundation
import OAuth2
import TestSupport
import Testing

/// A session against a server that answers UNAUTHENTICATED to every call (the h2 fault server's
/// TrailersOnly scenario), with the Authlib sandbox issuer behind the refreshes.
@Suite("AuthSession against a server that rejects every call")
struct RejectingServerTests {
    @Test("10 calls the server rejects: each is retried once, and the issuer sees one refresh, not ten")
    func oneRefreshForManyRejections() async throws {
        let issuer = try await SandboxIssuer.shared()
        let client = try await issuer.makeClient()
        let session = AuthSession(state: try await issuer.signIn(client))
        let faults = try await Peers.faultServer()
        let channel = try Channel(target: "\(faults.host):\(faults.port("h2c"))", transportSecurity: .plaintext)
        let options = CallOptions(
            // Each call is rejected at once; only a hang reaches this, not a loaded machine.
            timeout: .seconds(120),
            credentials: .provider(session),
            allowsInsecureCredentials: true
        )
        let before = try await issuer.counters(of: client)["refresh_requests", default: 0]
        for _ in 0..<10 {
            let error = await #expect(throws: RPCError.self) {
                try await channel.unary(
                    MethodDescriptor(service: "fault.Fault", method: "TrailersOnly"),
                    request: Array("hello".utf8),
                    serializer: RawBytesCodec(),
                    deserializer: RawBytesCodec(),
                    options: options
                )
            }
            #expect(error?.code == .unauthenticated)
        }
        let refreshes = try await issuer.counters(of: client)["refresh_requests", default: 0] - before
        #expect(refreshes == 1, "\(refreshes) refreshes for 10 rejected calls")
    }
}
