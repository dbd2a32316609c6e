import AuthRPC
import AuthSampleService
import Foundation
import TestSupport
import Testing

@testable import OAuth2

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The loopback redirect receiver against hostile local processes (real sockets), then the real
/// redirect from the sandbox issuer.
@Suite("Loopback redirect against hostile local clients")
struct LoopbackRedirectTests {
    func start(
        _ issuer: SandboxIssuer,
        limits: LoopbackAuthorizationFlow.ReceiverLimits = .init()
    ) async throws
        -> (LoopbackAuthorizationFlow.PendingAuthorization, OAuthClient, port: Int, state: String)
    {
        let client = try await issuer.makeClient()
        let flow = LoopbackAuthorizationFlow(
            configuration: issuer.configuration,
            client: client,
            scopes: SandboxIssuer.scopes,
            timeout: .seconds(60),
            receiverLimits: limits
        )
        let pending = try flow.start()
        let port = try #require(URL(string: pending.redirectURI)?.port)
        let state = try #require(
            URLComponents(url: pending.authorizationURL, resolvingAgainstBaseURL: false)?.queryItems?.first {
                $0.name == "state"
            }?.value
        )
        return (pending, client, port, state)
    }

    /// Starts waiting for the redirect, and returns once the receiver's thread serves: a client
    /// that connects before would wait in the listener's backlog for as long as the task takes to
    /// be scheduled, which a loaded pool can stretch past a client's time limit.
    func completing(
        _ pending: LoopbackAuthorizationFlow.PendingAuthorization
    ) async throws -> Task<AuthState, any Error> {
        let completion = Task { try await pending.complete() }
        try await eventually("the redirect receiver serves") { pending.isReceiving }
        return completion
    }

    @Test("redirects with a wrong or missing state get 400 and do not end the wait; the real redirect then signs in")
    func wrongStateDoesNotAbort() async throws {
        let issuer = try await SandboxIssuer.shared()
        let (pending, client, port, state) = try await start(issuer)
        let completion = try await completing(pending)
        for query in [
            "code=stolen&state=forged", "code=stolen", "error=access_denied&state=forged", "error=access_denied",
            "code=stolen&state=\(state)&state=forged", "state=forged&code=stolen&state=\(state)",
            "code=stolen&state=\(state)&code=other",
        ] {
            let forged = try await RawLoopbackClient.connect(port: port)
            try forged.send("GET /oauth2callback?\(query) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            #expect(await forged.status() == 400, "\(query)")
        }
        #expect(try await issuer.counters(of: client)["token_requests", default: 0] == 0)
        // Still waiting: the browser's redirect, with the right state, completes the sign-in.
        async let page = URLSession.shared.data(from: pending.authorizationURL)
        let signedIn = try await completion.value
        #expect((try await page.1 as? HTTPURLResponse)?.statusCode == 200)
        #expect(signedIn.grant.type == .authorizationCode)
        #expect(try await issuer.counters(of: client)["token_requests", default: 0] == 1)
        let answer = try await issuer.whoAmI(
            on: try issuer.channel(),
            options: .init(credentials: .provider(AuthSession(state: signedIn)))
        )
        #expect(answer.username == issuer.sandbox.user)
    }

    @Test("a connection that sends no complete request head in time is closed; the wait goes on")
    func idleConnectionsTimeOut() async throws {
        let issuer = try await SandboxIssuer.shared()
        let (pending, _, port, _) = try await start(
            issuer,
            limits: .init(maximumConnections: 32, requestHeadTimeout: .milliseconds(300))
        )
        let completion = try await completing(pending)
        let idle = try await RawLoopbackClient.connect(port: port)
        let partial = try await RawLoopbackClient.connect(port: port)
        try partial.send("GET /oauth2callback?code=x")
        #expect(await idle.readUntilClosed(limit: .seconds(10)).closed)
        #expect(await partial.readUntilClosed(limit: .seconds(10)).closed)
        async let page = URLSession.shared.data(from: pending.authorizationURL)
        _ = try await completion.value
        #expect((try await page.1 as? HTTPURLResponse)?.statusCode == 200)
    }

    @Test("past the connection cap the oldest waiting connection is closed to admit the new one")
    func connectionCapEvictsTheOldest() async throws {
        let issuer = try await SandboxIssuer.shared()
        let (pending, _, port, _) = try await start(
            issuer,
            limits: .init(maximumConnections: 4, requestHeadTimeout: .seconds(120))
        )
        let completion = try await completing(pending)
        var idle: [RawLoopbackClient] = []
        for _ in 0..<4 { idle.append(try await RawLoopbackClient.connect(port: port)) }
        // Make sure the receiver has accepted those four before the fifth arrives.
        let probe = try await RawLoopbackClient.connect(port: port)
        try probe.send("GET /favicon.ico HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
        #expect(await probe.status() == 404)
        #expect(await idle[0].readUntilClosed(limit: .seconds(10)).closed, "the oldest connection was not closed")
        #expect(await !idle[3].readUntilClosed(limit: .milliseconds(200)).closed)
        // The browser still gets through.
        async let page = URLSession.shared.data(from: pending.authorizationURL)
        _ = try await completion.value
        #expect((try await page.1 as? HTTPURLResponse)?.statusCode == 200)
    }

    @Test("a request head over 16 KiB gets 431 and does not end the wait")
    func oversizedHeadIsRefused() async throws {
        let issuer = try await SandboxIssuer.shared()
        let (pending, _, port, state) = try await start(issuer)
        let completion = try await completing(pending)
        let huge = try await RawLoopbackClient.connect(port: port)
        try huge.send(
            "GET /oauth2callback?state=\(state)&code=x HTTP/1.1\r\nX-Filler: \(String(repeating: "a", count: 17 * 1024))\r\n\r\n"
        )
        #expect(await huge.status() == 431)
        async let page = URLSession.shared.data(from: pending.authorizationURL)
        _ = try await completion.value
        #expect((try await page.1 as? HTTPURLResponse)?.statusCode == 200)
    }

    @Test(
        "the right state with another Host (a rebound name), method or request form is refused; the wait goes on"
    )
    func misdirectedRequestsDoNotAbort() async throws {
        let issuer = try await SandboxIssuer.shared()
        let (pending, client, port, state) = try await start(issuer)
        let completion = try await completing(pending)
        let query = "state=\(state)&code=stolen"
        let refused: [(request: String, status: Int)] = [
            ("GET /oauth2callback?\(query) HTTP/1.1\r\nHost: evil.example:\(port)\r\n\r\n", 421),
            ("GET /oauth2callback?\(query) HTTP/1.1\r\nHost: localhost:\(port)\r\n\r\n", 421),
            ("GET /oauth2callback?\(query) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 421),
            ("GET /oauth2callback?\(query) HTTP/1.1\r\n\r\n", 400),
            ("POST /oauth2callback?\(query) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n", 405),
            ("get /oauth2callback?\(query) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n", 405),
            ("GET /OAuth2Callback?\(query) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n", 404),
            ("GET http://127.0.0.1:\(port)/oauth2callback?\(query) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n", 400),
            ("GET /oauth2callback?\(query) HTTP/2.0\r\nHost: 127.0.0.1:\(port)\r\n\r\n", 505),
            ("GET /oauth2callback?\(query) HTTP/1.1\nHost: 127.0.0.1:\(port)\n\n", 400),
        ]
        for (request, status) in refused {
            let local = try await RawLoopbackClient.connect(port: port)
            try local.send(request)
            #expect(await local.status() == status, "\(request.debugDescription)")
        }
        // A malformed request line is answered before the head ends.
        let early = try await RawLoopbackClient.connect(port: port)
        try early.send("GET /oauth2callback?\(query) HTTP/1.1 extra\r\n")
        #expect(await early.status() == 400)
        #expect(try await issuer.counters(of: client)["token_requests", default: 0] == 0)
        async let page = URLSession.shared.data(from: pending.authorizationURL)
        _ = try await completion.value
        #expect((try await page.1 as? HTTPURLResponse)?.statusCode == 200)
    }

    @Test(
        "local clients that send a request and reset before the answer, 200 times, end neither the wait nor the process"
    )
    func resetsBeforeTheAnswer() async throws {
        let issuer = try await SandboxIssuer.shared()
        let (pending, client, port, state) = try await start(issuer)
        let completion = try await completing(pending)
        // Each is answered (400, 404, 405, 421 or 431) after its sender is gone. Darwin raises
        // SIGPIPE on the first write after a reset unless the socket has SO_NOSIGPIPE; Linux fails
        // that first write with ECONNRESET quietly and raises SIGPIPE on a later one unless it
        // carries MSG_NOSIGNAL (LoopbackSocketTests drives a socket into that state).
        let requests = [
            "GET /oauth2callback?state=forged&code=stolen HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n",
            "GET /favicon.ico HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n",
            "POST /oauth2callback HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n",
            "GET /oauth2callback?state=\(state)&code=stolen HTTP/1.1\r\nHost: evil.example\r\n\r\n",
            "G(T / HTTP/1.1\r\n",
            "GET /oauth2callback?state=forged HTTP/1.1\r\nX: \(String(repeating: "a", count: 17 * 1024))\r\n\r\n",
        ]
        for round in 0..<200 {
            let local = try await RawLoopbackClient.connect(port: port)
            try local.send(requests[round % requests.count])
            local.reset()
        }
        // A last one that waits for its answer: the receiver got through every reset one.
        let probe = try await RawLoopbackClient.connect(port: port)
        try probe.send("GET /favicon.ico HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
        #expect(await probe.status() == 404)
        #expect(try await issuer.counters(of: client)["token_requests", default: 0] == 0)
        async let page = URLSession.shared.data(from: pending.authorizationURL)
        let signedIn = try await completion.value
        #expect((try await page.1 as? HTTPURLResponse)?.statusCode == 200)
        #expect(signedIn.grant.type == .authorizationCode)
    }
}
