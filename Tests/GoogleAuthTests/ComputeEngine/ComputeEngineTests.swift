import AuthRPC
import Foundation
import GoogleAuth
import OAuth2
import TestSupport
import Testing

@Suite("Compute Engine: tokens from the metadata server (the loopback emulator)")
struct ComputeEngineTests {
    @Test("the metadata token calls the grpcio service as the instance's account; the email is reported")
    func tokenCallsAsTheInstance() async throws {
        let google = try await GoogleSandbox.shared()
        let source = try ComputeEngineTokenSource(host: google.metadataHost)
        let token = try await source.fetchToken()
        #expect(token.lifetime == .seconds(3600))
        let caller = try await google.whoAmI(token: token.accessToken)
        #expect(caller.user == google.metadataEmail)
        #expect(caller.scope.split(separator: " ").contains(Substring(ServiceConfiguration.googleTestScope)))
        #expect(try await source.serviceAccountEmail() == google.metadataEmail)
    }

    @Test("scopes go in ?scopes= and come back as the token's scope")
    func scopes() async throws {
        let google = try await GoogleSandbox.shared()
        let source = try ComputeEngineTokenSource(
            host: google.metadataHost,
            scopes: [ServiceConfiguration.googleTestScope, "openid"]
        )
        let token = try await source.fetchToken()
        #expect(
            try await google.whoAmI(token: token.accessToken).scope == "\(ServiceConfiguration.googleTestScope) openid"
        )
    }

    /// A sandbox of its own: the knobs change the emulator for every caller.
    @Test("an answer without Metadata-Flavor: Google is refused; 5xx is transient; the next good answer works")
    func flavorAndFailures() async throws {
        let own = GoogleSandbox(sandbox: try await Peers.launchSandbox(name: "google-metadata-knobs"))
        defer { own.sandbox.process.stop() }
        let source = try ComputeEngineTokenSource(host: own.metadataHost)

        try await own.metadataKnob("omit-flavor", ["enabled": true])
        let notMetadata = try await #require(throws: OAuthError.self) { try await source.fetchToken() }
        #expect(notMetadata.kind == .invalidConfiguration)
        #expect(notMetadata.message.contains("without Metadata-Flavor: Google"))
        try await own.metadataKnob("omit-flavor", ["enabled": false])

        try await own.metadataKnob("fail-tokens", ["status": 503, "count": 1])
        let unavailable = try await #require(throws: OAuthError.self) { try await source.fetchToken() }
        #expect(unavailable.isTransient)
        #expect(unavailable.message.contains("HTTP 503"))

        try await own.metadataKnob("fail-tokens", ["status": 404, "count": 1])
        let missing = try await #require(throws: OAuthError.self) { try await source.fetchToken() }
        #expect(missing.kind == .invalidConfiguration)

        let token = try await source.fetchToken()
        #expect(try await own.whoAmI(token: token.accessToken).user == own.metadataEmail)
        let counters = try await own.metadataCounters()
        #expect(counters["token_requests"] == 4)
        #expect(counters["requests_without_flavor"] == 0, "every request carried Metadata-Flavor: Google")
    }

    @Test("a metadata server that cannot be reached is a transient error")
    func unreachable() async throws {
        let source = try ComputeEngineTokenSource(host: "127.0.0.1:\(Ports.closed())")
        let error = try await #require(throws: OAuthError.self) { try await source.fetchToken() }
        #expect(error.isTransient)
    }

    @Test("hosts that are not HOST[:PORT] and scopes with commas are refused")
    func badArguments() throws {
        for host in ["", "http://x", "x/y", "a b", "x:port"] {
            #expect(throws: OAuthError.self, "\(host)") { try ComputeEngineTokenSource(host: host) }
        }
        #expect(throws: OAuthError.self) { try ComputeEngineTokenSource(scopes: ["a,b"]) }
        #expect(try ComputeEngineTokenSource().host == "metadata.google.internal")
    }
}
