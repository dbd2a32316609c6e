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
    @Test(
        "an answer without Metadata-Flavor: Google is refused at once; 408/429/5xx are retried as google-auth does, up to the attempts; 404 and 502 are not retried (before: one 503 failed the fetch)"
    )
    func flavorAndFailures() async throws {
        let own = GoogleSandbox(sandbox: try await Peers.launchSandbox(name: "google-metadata-knobs"))
        defer { own.sandbox.process.stop() }
        let retry = MetadataRetry(attempts: 3, initialBackoff: .milliseconds(20))
        let source = try ComputeEngineTokenSource(host: own.metadataHost, retry: retry)
        var expectedRequests = 0
        func requests() async throws -> Int? { try await own.metadataCounters()["token_requests"] }

        try await own.metadataKnob("omit-flavor", ["enabled": true])
        let notMetadata = try await #require(throws: OAuthError.self) { try await source.fetchToken() }
        #expect(notMetadata.kind == .invalidConfiguration)
        #expect(notMetadata.message.contains("without Metadata-Flavor: Google"))
        try await own.metadataKnob("omit-flavor", ["enabled": false])
        expectedRequests += 1
        #expect(try await requests() == expectedRequests, "a server that is not the metadata server is asked once")

        try await own.metadataKnob("fail-tokens", ["status": 503, "count": 2])
        let afterRetries = try await source.fetchToken()
        #expect(try await own.whoAmI(token: afterRetries.accessToken).user == own.metadataEmail)
        expectedRequests += 3
        #expect(try await requests() == expectedRequests, "two 503s, then the token")

        try await own.metadataKnob("fail-tokens", ["status": 429, "count": 1])
        _ = try await source.fetchToken()
        expectedRequests += 2
        #expect(try await requests() == expectedRequests)

        try await own.metadataKnob("fail-tokens", ["status": 503, "count": 3])
        let unavailable = try await #require(throws: OAuthError.self) { try await source.fetchToken() }
        #expect(unavailable.isTransient)
        #expect(
            unavailable.message
                == "the metadata server at \(own.metadataHost) answered HTTP 503; try again later (after 3 attempts)"
        )
        expectedRequests += 3
        #expect(try await requests() == expectedRequests)

        for (status, kind) in [(404, OAuthError.Kind.invalidConfiguration), (502, .transient)] {
            try await own.metadataKnob("fail-tokens", ["status": status, "count": 1])
            let refused = try await #require(throws: OAuthError.self) { try await source.fetchToken() }
            #expect(refused.kind == kind, "HTTP \(status)")
            #expect(refused.message.contains("HTTP \(status)"))
            expectedRequests += 1
            #expect(try await requests() == expectedRequests, "HTTP \(status) is not retried")
        }

        // maximumDuration bounds the whole fetch: after the first wait (360-440 ms), a second one
        // (720-880 ms) would end past 1 s, so it is not begun (on a loaded machine the first
        // answer can come so late that even the first wait is not: one attempt).
        let bounded = try ComputeEngineTokenSource(
            host: own.metadataHost,
            retry: MetadataRetry(attempts: 5, initialBackoff: .milliseconds(400), maximumDuration: .seconds(1))
        )
        try await own.metadataKnob("fail-tokens", ["status": 503, "count": 5])
        let outOfTime = try await #require(throws: OAuthError.self) { try await bounded.fetchToken() }
        let made = (try await requests() ?? 0) - expectedRequests
        #expect((1...2).contains(made), "a 1 s budget leaves room for at most 2 of the 5 attempts")
        // The last attempt's failure is named: the 503, or (a loaded machine runs the second
        // attempt so late that its connection has no budget left) its timed-out connection.
        #expect(
            outOfTime.message.contains("answered HTTP 503") || outOfTime.message.contains("timed out"),
            "\(outOfTime.message)"
        )
        if made == 2 { #expect(outOfTime.message.hasSuffix("(after 2 attempts)")) }
        expectedRequests += made

        let counters = try await own.metadataCounters()
        #expect(counters["requests_without_flavor"] == 0, "every request carried Metadata-Flavor: Google")
    }

    @Test("a metadata server that cannot be reached is a transient error after the attempts")
    func unreachable() async throws {
        let source = try ComputeEngineTokenSource(
            host: "127.0.0.1:\(Ports.closed())",
            // Both attempts whatever the machine's load: the default 30 s bound on the whole fetch
            // was passed by the first refused attempt alone in a full run.
            retry: MetadataRetry(attempts: 2, initialBackoff: .milliseconds(10), maximumDuration: .seconds(600))
        )
        let error = try await #require(throws: OAuthError.self) { try await source.fetchToken() }
        #expect(error.isTransient)
        #expect(error.message.hasSuffix("(after 2 attempts)"), "\(error.message)")
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
