import AuthRPC
import AuthRPCSystem
import Foundation
import GoogleAuth
import OAuth2
import Testing

/// How IAM Credentials answers are read, I/O-free: a canned answer per test from a transport that
/// also keeps the request it was given.
@Suite("Impersonation: IAM Credentials requests and answers, read strictly")
struct ImpersonationAnswerTests {
    static let endpoint = URL(
        string:
            "https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/t@p.iam.gserviceaccount.com:generateAccessToken"
    )!
    static let sourceToken = "ya29.source-token-SECRET"

    private func source(_ answer: CannedTransport) throws -> ImpersonatedTokenSource {
        try ImpersonatedTokenSource(
            source: StaticProvider(token: Self.sourceToken),
            targetPrincipal: "t@p.iam.gserviceaccount.com",
            delegates: ["d@p.iam.gserviceaccount.com"],
            scopes: ["https://www.googleapis.com/auth/cloud-platform"],
            lifetime: .seconds(600),
            transport: answer
        )
    }

    private static func rfc3339(_ date: Date, fractional: Bool = false) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions =
            fractional ? [.withInternetDateTime, .withFractionalSeconds] : [.withInternetDateTime]
        return formatter.string(from: date)
    }

    @Test("the request: POST JSON with delegates (prefixed), scope, lifetime and the source's bearer token")
    func requestShape() async throws {
        let expiry = Self.rfc3339(Date().addingTimeInterval(600))
        let transport = CannedTransport(200, #"{"accessToken": "ya29.impersonated", "expireTime": "\#(expiry)"}"#)
        let token = try await source(transport).fetchToken()
        #expect(token.accessToken == "ya29.impersonated")
        #expect(abs((token.lifetime ?? .zero).components.seconds - 600) <= 2)
        let request = try #require(transport.requests.first)
        #expect(request.method == "POST")
        #expect(request.url == Self.endpoint)
        #expect(request.headers.contains { $0.name == "Authorization" && $0.value == "Bearer \(Self.sourceToken)" })
        #expect(request.headers.contains { $0.name == "Content-Type" && $0.value == "application/json" })
        let body = try #require(JSONSerialization.jsonObject(with: request.body ?? Data()) as? [String: Any])
        #expect(body["delegates"] as? [String] == ["projects/-/serviceAccounts/d@p.iam.gserviceaccount.com"])
        #expect(body["scope"] as? [String] == ["https://www.googleapis.com/auth/cloud-platform"])
        #expect(body["lifetime"] as? String == "600s")
    }

    @Test("expireTime with fractional seconds or an offset is RFC 3339 too")
    func expireTimeForms() async throws {
        let base = Date().addingTimeInterval(900)
        for text in [Self.rfc3339(base, fractional: true), "\(Self.rfc3339(base).dropLast())+00:00"] {
            let token = try await source(CannedTransport(200, #"{"accessToken": "a", "expireTime": "\#(text)"}"#))
                .fetchToken()
            #expect(abs((token.lifetime ?? .zero).components.seconds - 900) <= 2, "\(text)")
        }
    }

    @Test(
        "unusable answers are transient and name the endpoint: no token, a token that cannot be a header, no or bad expireTime, expired, too far"
    )
    func unusableAnswers() async throws {
        let soon = Self.rfc3339(Date().addingTimeInterval(600))
        let cases: [(String, String)] = [
            (#"{"expireTime": "\#(soon)"}"#, "without a usable accessToken"),
            (#"{"accessToken": "has space", "expireTime": "\#(soon)"}"#, "without a usable accessToken"),
            (#"{"accessToken": "a"}"#, "expireTime"),
            (#"{"accessToken": "a", "expireTime": "tomorrow"}"#, "expireTime"),
            (#"{"accessToken": "a", "expireTime": 1700000000}"#, "expireTime"),
            (#"{"accessToken": "a", "expireTime": "2001-01-01T00:00:00Z"}"#, "already expired"),
            (#"{"accessToken": "a", "expireTime": "2999-01-01T00:00:00Z"}"#, "12 hours"),
            ("[1, 2]", "JSON object"),
            ("not json", "JSON object"),
        ]
        for (body, reason) in cases {
            let error = try await #require(throws: OAuthError.self) {
                try await source(CannedTransport(200, body)).fetchToken()
            }
            #expect(error.kind == .transient, "\(body)")
            #expect(error.message.contains(reason), "\(body): \(error.message)")
            #expect(error.message.contains("iamcredentials.googleapis.com"), "\(body)")
        }
    }

    @Test("refusals: 401/403 authorization with Google's status, 400/404 configuration, 429/5xx transient")
    func refusals() async throws {
        let cases: [(Int, OAuthError.Kind, String?)] = [
            (401, .authorization, "UNAUTHENTICATED"), (403, .authorization, "PERMISSION_DENIED"),
            (400, .invalidConfiguration, nil), (404, .invalidConfiguration, nil), (429, .transient, nil),
            (503, .transient, nil),
        ]
        for (status, kind, code) in cases {
            let body = #"{"error": {"code": \#(status), "message": "no", "status": "\#(code ?? "OTHER")"}}"#
            let error = try await #require(throws: OAuthError.self) {
                try await source(CannedTransport(status, body)).fetchToken()
            }
            #expect(error.kind == kind, "\(status)")
            if let code { #expect(error.oauthErrorCode == code) }
            #expect(error.message.contains("HTTP \(status)"))
        }
        // A 403 without Google's JSON still gets a code.
        let bare = try await #require(throws: OAuthError.self) {
            try await source(CannedTransport(403, "<html>denied</html>")).fetchToken()
        }
        #expect(bare.oauthErrorCode == "PERMISSION_DENIED")
    }

    @Test("a hostile error message is quoted printable, bounded, and without the source token")
    func hostileMessage() async throws {
        let hostile =
            "\u{1B}[2J\u{1B}]0;title\u{07}echo \(Self.sourceToken)\r\nauth_sample: error: FORGED\u{202E}"
            + String(repeating: "x", count: 5000)
        let body = try JSONSerialization.data(withJSONObject: [
            "error": ["code": 403, "message": hostile, "status": "PERMISSION_DENIED"]
        ])
        let error = try await #require(throws: OAuthError.self) {
            try await source(CannedTransport(403, String(decoding: body, as: UTF8.self))).fetchToken()
        }
        #expect(!error.message.contains(Self.sourceToken))
        #expect(!error.message.contains("\u{1B}"))
        #expect(!error.message.contains("\n"))
        #expect(!error.message.contains("\u{202E}"))
        #expect(error.message.count < 600)
    }

    @Test("a redirect, an oversized answer and an http endpoint off loopback are refused")
    func transportRules() async throws {
        let redirect = try await #require(throws: OAuthError.self) {
            try await source(CannedTransport(302, "")).fetchToken()
        }
        #expect(redirect.kind == .invalidConfiguration)
        let huge = #"{"accessToken": "a", "pad": "\#(String(repeating: "x", count: 70_000))"}"#
        let oversized = try await #require(throws: OAuthError.self) {
            try await source(CannedTransport(200, huge)).fetchToken()
        }
        #expect(oversized.kind == .transient)
        #expect(throws: OAuthError.self) {
            try ImpersonatedTokenSource(
                source: StaticProvider(token: "t"),
                targetPrincipal: "t@p.iam.gserviceaccount.com",
                scopes: ["s"],
                endpoint: URL(string: "http://iam.example.com/v1/x:generateAccessToken")!
            )
        }
    }

    @Test("bad settings are refused before anything is sent: lifetime, scopes, target, delegates")
    func settings() {
        func make(
            target: String = "t@p.iam.gserviceaccount.com",
            delegates: [String] = [],
            scopes: [String] = ["s"],
            lifetime: Duration = .seconds(3600)
        ) throws(OAuthError) -> ImpersonatedTokenSource {
            try ImpersonatedTokenSource(
                source: StaticProvider(token: "t"),
                targetPrincipal: target,
                delegates: delegates,
                scopes: scopes,
                lifetime: lifetime
            )
        }
        for lifetime: Duration in [.zero, .milliseconds(1500), .seconds(43_201)] {
            #expect(throws: OAuthError.self, "\(lifetime)") { try make(lifetime: lifetime) }
        }
        #expect(throws: OAuthError.self) { try make(scopes: []) }
        #expect(throws: OAuthError.self) { try make(scopes: ["a b"]) }
        #expect(throws: OAuthError.self) { try make(target: "not-an-email") }
        #expect(throws: OAuthError.self) { try make(target: "a@b/../c") }
        #expect(throws: OAuthError.self) { try make(delegates: ["projects/-/serviceAccounts/"]) }
        #expect((try? make(lifetime: .seconds(43_200))) != nil)
        #expect(
            (try? make(delegates: ["d@p.iam.gserviceaccount.com"]))?.delegates == [
                "projects/-/serviceAccounts/d@p.iam.gserviceaccount.com"
            ]
        )
    }

    @Test(
        "generateIdToken: the lifetime comes from the token's exp; no exp, a string exp or an expired token is refused"
    )
    func idTokenExpiry() async throws {
        func jwt(_ claims: [String: Any]) throws -> String {
            func part(_ object: [String: Any]) throws -> String {
                try JSONSerialization.data(withJSONObject: object).base64EncodedString()
                    .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                    .replacingOccurrences(of: "=", with: "")
            }
            return try "\(part(["alg": "RS256"])).\(part(claims)).c2ln"
        }
        func fetch(_ token: String) async throws -> FetchedAccessToken {
            let source = try ImpersonatedIDTokenSource(
                source: StaticProvider(token: "t"),
                targetPrincipal: "t@p.iam.gserviceaccount.com",
                audience: "https://service.a.run.app",
                transport: CannedTransport(200, #"{"token": "\#(token)"}"#)
            )
            return try await source.fetchToken()
        }
        let exp = Int(Date().timeIntervalSince1970) + 1800
        let good = try await fetch(try jwt(["exp": exp, "aud": "https://service.a.run.app"]))
        #expect(abs((good.expiresAt?.timeIntervalSince1970 ?? 0) - Double(exp)) < 1)
        for (claims, reason) in [
            (["aud": "x"], "exp"), (["exp": "\(exp)"], "exp"), (["exp": 1_000_000], "already expired"),
            (["exp": exp + 400_000], "more than a day"),
        ] as [([String: Any], String)] {
            let error = try await #require(throws: OAuthError.self) { try await fetch(try jwt(claims)) }
            #expect(error.kind == .transient)
            #expect(error.message.contains(reason), "\(error.message)")
        }
        let notJWT = try await #require(throws: OAuthError.self) { try await fetch("opaque-token") }
        #expect(notJWT.message.contains("not a JWT"))
    }
}

/// One canned answer for every request, keeping the requests.
final class CannedTransport: OAuthTransport {
    let status: Int
    let body: String
    private let sent = Locked<[OAuthHTTPRequest]>([])

    init(_ status: Int, _ body: String) {
        self.status = status
        self.body = body
    }

    var requests: [OAuthHTTPRequest] { sent.withLock { $0 } }

    func send(_ request: OAuthHTTPRequest) async throws -> OAuthHTTPResponse {
        sent.withLock { $0.append(request) }
        return OAuthHTTPResponse(
            statusCode: status,
            headers: ["content-type": "application/json"],
            body: Data(body.utf8)
        )
    }
}
