import AuthRPC
import Foundation
import GoogleAuth
import OAuth2
import TestSupport
import Testing

/// 200 calls at once on an expired token make exactly one token request, counted at the sandbox,
/// for each kind of Google credential; self-signed JWTs are minted once per audience.
///
/// A sandbox of its own, one test at a time: grpcio's C-core cancels calls that wait too long in
/// its queue, which 200 calls behind another suite's batch on a shared server can do, and the
/// metadata server's token lifetime is changed for everyone who uses it.
@Suite("GoogleCredentials: 200 concurrent calls, one token request", .serialized, .timeLimit(.minutes(5)))
struct SharedTokenRequestTests {
    static let calls = 200
    let scope = ServiceConfiguration.googleTestScope

    /// Makes `credentials` hold a token that expires: it fetches one living 2 s (the sandbox was
    /// told so), then the test waits (bounded) until it is no longer fresh here and has expired
    /// at the issuer, and tells the sandbox to hand out hour-long tokens again.
    ///
    /// The token is fetched from the credentials, not by a call: on a loaded machine a 2-second
    /// token (and the fresh one its refusal brings) can expire before a call reaches the server.
    /// The tests count token requests from what the sandbox says afterwards.
    private func holdAnExpiredToken(
        _ credentials: GoogleCredentials,
        of clientID: String,
        in google: GoogleSandbox
    ) async throws {
        try await google.setTokenLifetime(of: clientID, seconds: 2)
        _ = try await credentials.token()
        for _ in 0..<100 where credentials.cachedToken() != nil {
            try await Task.sleep(for: .milliseconds(50))
        }
        try #require(credentials.cachedToken() == nil, "the 2-second token still counts as fresh")
        try await Task.sleep(for: .milliseconds(1100))
        try await google.setTokenLifetime(of: clientID, seconds: 3600)
    }

    @Test("service account: 200 calls on an expired token, one JWT bearer grant")
    func serviceAccount() async throws {
        let google = try await OwnSandbox.shared()
        let key = try ServiceAccountKey(json: try await google.newServiceAccountKey())
        let credentials = try GoogleCredentials(source: ServiceAccountTokenSource(key: key, scopes: [scope]))
        try await holdAnExpiredToken(credentials, of: key.clientEmail, in: google)
        let before = try await google.issuerCounters(of: key.clientEmail)["jwt_bearer_requests", default: 0]
        #expect(before >= 1)

        let users = try await google.concurrentCalls(Self.calls, credentials)
        #expect(users.count == Self.calls && Set(users) == [key.clientEmail])
        let after = try await google.issuerCounters(of: key.clientEmail)["jwt_bearer_requests", default: 0]
        #expect(after == before + 1, "\(after - before) JWT bearer grants for \(Self.calls) calls")
    }

    @Test("authorized user: 200 calls on an expired token, one refresh")
    func authorizedUser() async throws {
        let google = try await OwnSandbox.shared()
        let user = try AuthorizedUserCredentials(json: try await google.newAuthorizedUser())
        let credentials = try GoogleCredentials(
            source: AuthorizedUserTokenSource(credentials: user, tokenEndpoint: google.tokenEndpoint)
        )
        try await holdAnExpiredToken(credentials, of: user.clientID, in: google)
        let before = try await google.issuerCounters(of: user.clientID)["refresh_requests", default: 0]
        #expect(before >= 1)

        let users = try await google.concurrentCalls(Self.calls, credentials)
        #expect(users.count == Self.calls && Set(users) == [google.sandbox.user])
        let after = try await google.issuerCounters(of: user.clientID)["refresh_requests", default: 0]
        #expect(after == before + 1, "\(after - before) refreshes for \(Self.calls) calls")
    }

    @Test("Compute Engine: 200 calls on an expired token, one metadata-server request")
    func computeEngine() async throws {
        let google = try await OwnSandbox.shared()
        let credentials = try GoogleCredentials(source: ComputeEngineTokenSource(host: google.metadataHost))
        try await holdAnExpiredToken(credentials, of: google.metadataEmail, in: google)
        let before = try await google.metadataCounters()["token_requests", default: 0]
        #expect(before >= 1)

        let users = try await google.concurrentCalls(Self.calls, credentials)
        #expect(users.count == Self.calls && Set(users) == [google.metadataEmail])
        let after = try await google.metadataCounters()["token_requests", default: 0]
        #expect(after == before + 1, "\(after - before) metadata-server requests for \(Self.calls) calls")
    }

    @Test("self-signed JWTs: 200 calls to two services, one JWT minted per audience")
    func selfSignedJWTs() async throws {
        let google = try await OwnSandbox.shared()
        let key = try ServiceAccountKey(json: try await google.newServiceAccountKey())
        let credentials = try GoogleCredentials(selfSignedJWTsFor: key)
        let port = google.sandbox.tlsPort
        // Half the calls name the service by DNS name, half by address: two audiences.
        let users = try await google.concurrentCalls(Self.calls, credentials) {
            $0.isMultiple(of: 2) ? nil : "127.0.0.1:\(port)"
        }
        #expect(users.count == Self.calls && Set(users) == [key.clientEmail])
        let counters = try await google.issuerCounters(of: key.clientEmail)
        #expect(counters["jwt_access_tokens https://localhost/"] == 1, "\(counters)")
        #expect(counters["jwt_access_tokens https://127.0.0.1/"] == 1, "\(counters)")
        #expect(counters["jwt_access_tokens"] == 2, "\(counters)")
    }

    @Test("the server revokes the token 200 calls hold: each is retried once, and one token request serves them all")
    func revokedTokenIsRenewedOnce() async throws {
        let google = try await OwnSandbox.shared()
        let key = try ServiceAccountKey(json: try await google.newServiceAccountKey())
        let credentials = try GoogleCredentials(source: ServiceAccountTokenSource(key: key, scopes: [scope]))
        _ = try await google.call(credentials)
        try await google.expireAccessTokens(of: key.clientEmail)

        let users = try await google.concurrentCalls(Self.calls, credentials)
        #expect(users.count == Self.calls && Set(users) == [key.clientEmail])
        #expect(try await google.issuerCounters(of: key.clientEmail)["jwt_bearer_requests"] == 2)
    }
}

/// The sandbox these tests share, started once.
private actor OwnSandbox {
    private static let shared_ = OwnSandbox()
    private var launch: Task<GoogleSandbox, any Error>?

    static func shared() async throws -> GoogleSandbox { try await shared_.start() }

    private func start() async throws -> GoogleSandbox {
        if let launch { return try await launch.value }
        let task = Task.detached {
            GoogleSandbox(sandbox: try await Peers.launchSandbox(name: "sandbox-google-200-calls"))
        }
        launch = task
        return try await task.value
    }
}
