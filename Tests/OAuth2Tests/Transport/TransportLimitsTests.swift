import Foundation
import OAuth2
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The library's two transports: its own HTTP/1.1 client (the default) and URLSession's.
enum TransportUnderTest: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case http1
    case urlSession

    var testDescription: String { rawValue }

    var transport: any OAuthTransport {
        switch self {
        case .http1: HTTP1OAuthTransport.standard
        case .urlSession: URLSessionOAuthTransport()
        }
    }
}

/// What each OAuth transport does with answers no authorization server should send: bodies too
/// large to be a token response, redirects, answers that trickle in.
@Suite("OAuth transport limits against the hostile peer")
struct TransportLimitsTests {
    static let client = OAuthClient(id: "limits-test-client", secret: "limits-test-secret")

    func clientCredentials(
        at script: HostilePeer.Script,
        transport: any OAuthTransport
    ) async -> OAuthError? {
        do throws(OAuthError) {
            _ = try await ClientCredentialsFlow.authorize(
                configuration: HostilePeer.configuration(tokenEndpoint: script),
                client: Self.client,
                scopes: [],
                transport: transport
            )
            return nil
        } catch {
            return error
        }
    }

    @Test("a token response with a 1.2 MB access token is refused for its size", arguments: TransportUnderTest.allCases)
    func hugeTokenIsRefused(transport: TransportUnderTest) async throws {
        let peer = try await HostilePeer.shared()
        let script = try await peer.script([
            "repeat": HostilePeer.repeated(
                "A",
                count: 1_200_000,
                prefix: #"{"token_type":"Bearer","access_token":""#,
                suffix: #""}"#
            )
        ])
        let error = try #require(await clientCredentials(at: script, transport: transport.transport))
        #expect(error.kind == .transient)
        #expect(error.message.contains("larger than"), "\(error.message.prefix(200))")
    }

    @Test(
        "an oversized answer is cut off while it is read: the connection is closed mid-body, not read to its end",
        arguments: ["exact", "omit"],
        TransportUnderTest.allCases
    )
    func oversizedBodyIsCutOff(contentLength: String, transport: TransportUnderTest) async throws {
        let peer = try await HostilePeer.shared()
        // 16 MiB in 64 KiB chunks, 20 ms apart (about 5 s in all), so how far the client read is
        // what it chose, not how fast FoundationNetworking drains a socket.
        let total = 16 * 1024 * 1024
        let script = try await peer.script([
            "repeat": HostilePeer.repeated("0123456789abcdef", count: total / 16),
            "content_length": contentLength, "chunk_bytes": 65_536, "drip_ms": 20,
        ])
        let error = try #require(await clientCredentials(at: script, transport: transport.transport))
        #expect(error.message.contains("larger than"), "\(error.message.prefix(200))")
        let stats = try await peer.settledStats(script)
        #expect(stats.aborted == 1)
        #expect(stats.bytesSent < 4 * 1024 * 1024, "the peer sent \(stats.bytesSent) of \(total) bytes")
    }

    @Test(
        "an announced Content-Length over the limit is refused without waiting for the body",
        arguments: TransportUnderTest.allCases
    )
    func announcedLengthOverTheLimit(transport: TransportUnderTest) async throws {
        let peer = try await HostilePeer.shared()
        let script = try await peer.script(["body": "{}", "content_length": 100_000_000])
        let error = try #require(await clientCredentials(at: script, transport: transport.transport))
        #expect(error.message.contains("larger than"), "\(error.message.prefix(200))")
    }

    @Test("a transport that ignores the limit still cannot hand over an oversized answer")
    func customTransportIsChecked() async throws {
        struct PlainURLSession: OAuthTransport {
            func send(_ request: OAuthHTTPRequest) async throws -> OAuthHTTPResponse {
                var urlRequest = URLRequest(url: request.url)
                urlRequest.httpMethod = request.method
                urlRequest.httpBody = request.body
                let (body, response) = try await URLSession.shared.data(for: urlRequest)
                return OAuthHTTPResponse(statusCode: (response as? HTTPURLResponse)?.statusCode ?? 0, body: body)
            }
        }
        let peer = try await HostilePeer.shared()
        let script = try await peer.script([
            "repeat": HostilePeer.repeated(
                "A",
                count: 1_200_000,
                prefix: #"{"token_type":"Bearer","access_token":""#,
                suffix: #""}"#
            )
        ])
        let error = try #require(await clientCredentials(at: script, transport: PlainURLSession()))
        #expect(error.message.contains("larger than"), "\(error.message.prefix(200))")
    }

    @Test(
        "a redirect is not followed: the token request, with its secrets, never reaches the target",
        arguments: [302, 307, 308],
        TransportUnderTest.allCases
    )
    func redirectsAreNotFollowed(status: Int, transport: TransportUnderTest) async throws {
        let peer = try await HostilePeer.shared()
        let target = try await peer.json(#"{"access_token":"at-from-the-redirect-target","token_type":"Bearer"}"#)
        let redirect = try await peer.script([
            "status": status, "headers": [["Location", target.url.absoluteString]], "body": "",
        ])
        let error = try #require(await clientCredentials(at: redirect, transport: transport.transport))
        #expect(error.message.contains("redirect"), "\(error.message.prefix(200))")
        #expect(try await peer.stats(redirect).hits == 1)
        #expect(try await peer.stats(target).hits == 0)
    }

    @Test("discovery does not follow a redirect either")
    func discoveryRedirectIsNotFollowed() async throws {
        let peer = try await HostilePeer.shared()
        let target = try await peer.json("{}")
        let redirect = try await peer.script([
            "status": 302, "headers": [["Location", target.url.absoluteString]], "body": "",
        ])
        let error = await #expect(throws: OAuthError.self) {
            try await ServiceConfiguration.discover(issuer: redirect.url, using: .openIDConnect)
        }
        #expect(error?.message.contains("redirect") == true, "\(error?.message.prefix(200) ?? "")")
        #expect(try await peer.stats(target).hits == 0)
    }

    @Test(
        "an answer that trickles in past the request's timeout fails, though no single pause is that long",
        arguments: TransportUnderTest.allCases
    )
    func tricklingAnswerTimesOut(transport: TransportUnderTest) async throws {
        let peer = try await HostilePeer.shared()
        // 200 drips of 150 ms: the answer would take 30 s, far past the 1 s timeout even when the
        // machine is so loaded that the timer fires late.
        let script = try await peer.script([
            "body": String(repeating: " ", count: 200) + "{}", "chunk_bytes": 1, "drip_ms": 150,
        ])
        let request = OAuthHTTPRequest(url: script.url, timeout: .seconds(1))
        await #expect(throws: (any Error).self) { _ = try await transport.transport.send(request) }
        #expect(try await peer.settledStats(script).aborted == 1)
    }
}
