import Foundation
import OAuth2

/// The IAM Service Account Credentials API (`iamcredentials.googleapis.com/v1`), the two methods
/// impersonation needs: `generateAccessToken` and `generateIdToken`, each a JSON POST
/// authenticated with the caller's own access token.
///
/// Requests go out through ``/OAuth2/OAuthTransport`` under the rules every OAuth request obeys
/// (https, or http on loopback; no redirects; a bounded answer). Errors name the endpoint and
/// what is wrong with printable text only, and never contain the caller's token or the token
/// the API answered with.
enum IAMCredentials {
    /// The API's answers are a few KiB at most (an ID token is the largest).
    static let maximumAnswerSize = 64 * 1024
    /// How long a request may take, from sending to the last byte of the answer.
    static let requestTimeout: Duration = .seconds(30)
    /// The longest lifetime the API grants (12 h, when the organization allows more than one hour).
    static let maximumLifetime: Duration = .seconds(43_200)

    /// The API's endpoint for `method` (`generateAccessToken`, `generateIdToken`) of the service
    /// account `email`, in `universeDomain`: `https://iamcredentials.<universe>/v1/projects/-/serviceAccounts/EMAIL:METHOD`.
    static func url(
        for email: String,
        method: String,
        universeDomain: String
    ) -> URL? {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~@")
        guard let escaped = email.addingPercentEncoding(withAllowedCharacters: allowed) else { return nil }
        return URL(
            string: "https://iamcredentials.\(universeDomain)/v1/projects/-/serviceAccounts/\(escaped):\(method)"
        )
    }

    /// POST {url} (the full `…/projects/-/serviceAccounts/EMAIL:generateAccessToken` URL) with
    /// `{"delegates": […], "scope": […], "lifetime": "3600s"}` and `Authorization: Bearer sourceToken`.
    ///
    /// - Returns: The token, its lifetime from the answer's `expireTime` (RFC 3339).
    /// - Throws: ``/OAuth2/OAuthError``: ``/OAuth2/OAuthError/Kind/authorization`` when the API
    ///   refuses the caller (401, 403: no `iam.serviceAccounts.getAccessToken` on the target or a
    ///   delegate), ``/OAuth2/OAuthError/Kind/invalidConfiguration`` for a lifetime outside
    ///   1 s...12 h, no scopes, or an answer of 400 or 404 (a bad request, an unknown account),
    ///   ``/OAuth2/OAuthError/Kind/transient`` for no answer, 408, 429, 5xx or an answer that
    ///   does not hold a usable token.
    static func generateAccessToken(
        at url: URL,
        sourceToken: String,
        delegates: [String],
        scopes: [String],
        lifetime: Duration,
        transport: any OAuthTransport
    ) async throws(OAuthError) -> FetchedAccessToken {
        guard !scopes.isEmpty else {
            throw OAuthError(.invalidConfiguration, "impersonation needs at least one scope to get an access token")
        }
        let seconds = lifetime.components.seconds
        guard lifetime >= .seconds(1), lifetime <= maximumLifetime, lifetime == .seconds(seconds) else {
            throw OAuthError(
                .invalidConfiguration,
                "an impersonated token's lifetime must be whole seconds from 1 s to 12 h, not \(lifetime)"
            )
        }
        let body: [String: Any] = ["delegates": delegates, "scope": scopes, "lifetime": "\(seconds)s"]
        let (answer, receivedAt) = try await post(body, to: url, sourceToken: sourceToken, transport: transport)
        let server = "the IAM Credentials endpoint \(GrantRequest.redacted(url))"
        guard let token = answer["accessToken"] as? String, TokenSyntax.isBearerToken(token) else {
            throw OAuthError(.transient, "\(server) answered without a usable accessToken")
        }
        guard let expireText = answer["expireTime"] as? String, let expiresAt = RFC3339.date(expireText) else {
            throw OAuthError(.transient, "\(server) answered without an RFC 3339 expireTime")
        }
        return FetchedAccessToken(
            accessToken: token,
            receivedAt: receivedAt,
            lifetime: try remainingLifetime(until: expiresAt, from: receivedAt, server: server),
            tokenType: "Bearer",
            grantedScopes: scopes
        )
    }

    /// POST {url} (the full `…/projects/-/serviceAccounts/EMAIL:generateIdToken` URL) with
    /// `{"delegates": […], "audience": "…", "includeEmail": true}` and `Authorization: Bearer sourceToken`.
    ///
    /// - Returns: The ID token, its lifetime read from the token's own `exp`.
    /// - Throws: ``/OAuth2/OAuthError`` as ``generateAccessToken(at:sourceToken:delegates:scopes:lifetime:transport:)``;
    ///   ``/OAuth2/OAuthError/Kind/transient`` also for a token that is not a JWT or has no `exp`.
    static func generateIdToken(
        at url: URL,
        sourceToken: String,
        delegates: [String],
        audience: String,
        includeEmail: Bool,
        transport: any OAuthTransport
    ) async throws(OAuthError) -> FetchedAccessToken {
        guard !audience.isEmpty, audience.utf8.count <= 2048 else {
            throw OAuthError(.invalidConfiguration, "an ID token's audience must be 1 to 2048 bytes")
        }
        let body: [String: Any] = ["delegates": delegates, "audience": audience, "includeEmail": includeEmail]
        let (answer, receivedAt) = try await post(body, to: url, sourceToken: sourceToken, transport: transport)
        let server = "the IAM Credentials endpoint \(GrantRequest.redacted(url))"
        guard let token = answer["token"] as? String else {
            throw OAuthError(.transient, "\(server) answered without a token")
        }
        return try IDTokenExpiry.fetched(token, receivedAt: receivedAt, from: server)
    }

    // MARK: - Request and answer

    /// POSTs `body` as JSON to `url` with the caller's token, and returns the answer's JSON object.
    private static func post(
        _ body: [String: Any],
        to url: URL,
        sourceToken: String,
        transport: any OAuthTransport
    ) async throws(OAuthError) -> (answer: [String: Any], receivedAt: Date) {
        let server = "the IAM Credentials endpoint \(GrantRequest.redacted(url))"
        guard TokenSyntax.isBearerToken(sourceToken) else {
            throw OAuthError(
                .invalidConfiguration,
                "the source credential's token cannot go in an Authorization header"
            )
        }
        for delegate in body["delegates"] as? [String] ?? []
        where delegate.isEmpty || delegate.utf8.count > 512 || delegate.contains(where: { $0.isWhitespace }) {
            throw OAuthError(
                .invalidConfiguration,
                "a delegate of the impersonation chain is empty, too long or has whitespace"
            )
        }
        let json: Data
        do {
            json = try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys, .withoutEscapingSlashes])
        } catch {
            throw OAuthError(.invalidConfiguration, "cannot encode the request to \(server)")
        }
        let request = OAuthHTTPRequest(
            url: url,
            method: "POST",
            headers: [
                ("Authorization", "Bearer \(sourceToken)"),
                ("Content-Type", "application/json"),
                ("Accept", "application/json"),
            ],
            body: json,
            timeout: requestTimeout,
            maximumResponseBodySize: maximumAnswerSize
        )
        let response = try await GrantRequest.send(request, transport: transport, purpose: "IAM Credentials")
        let receivedAt = Date()
        switch response.statusCode {
        case 200..<300:
            guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any] else {
                throw OAuthError(
                    .transient,
                    "\(server) answered HTTP \(response.statusCode) with something other than a JSON object"
                )
            }
            return (object, receivedAt)
        case 408, 429, 500...:
            throw OAuthError(
                .transient,
                "\(server) answered HTTP \(response.statusCode)\(GoogleErrorAnswer.detail(response.body, hiding: sourceToken)); try again later"
            )
        case 401, 403:
            let status =
                GoogleErrorAnswer.status(response.body)
                ?? (response.statusCode == 401 ? "UNAUTHENTICATED" : "PERMISSION_DENIED")
            throw OAuthError(
                .authorization,
                "\(server) refused the caller (HTTP \(response.statusCode))\(GoogleErrorAnswer.detail(response.body, hiding: sourceToken))",
                oauthErrorCode: status
            )
        default:
            throw OAuthError(
                .invalidConfiguration,
                "\(server) refused the request (HTTP \(response.statusCode))\(GoogleErrorAnswer.detail(response.body, hiding: sourceToken))"
            )
        }
    }

    /// The time from `receivedAt` to `expiresAt`: at least a second, at most the API's maximum
    /// (a clock that is off by a little does not make a fresh token look expired forever).
    private static func remainingLifetime(
        until expiresAt: Date,
        from receivedAt: Date,
        server: String
    ) throws(OAuthError) -> Duration {
        let seconds = expiresAt.timeIntervalSince(receivedAt)
        guard seconds > 0 else {
            throw OAuthError(
                .transient,
                "\(server) answered with a token that has already expired (is this machine's clock right?)"
            )
        }
        guard seconds <= Double(maximumLifetime.components.seconds) + 300 else {
            throw OAuthError(.transient, "\(server) answered with an expireTime more than 12 hours away")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }
}

/// A Google API error answer, `{"error": {"code": 403, "message": "…", "status": "PERMISSION_DENIED"}}`,
/// read for messages only.
enum GoogleErrorAnswer {
    /// The `status` (`PERMISSION_DENIED`), when it is a short upper-case name.
    static func status(_ body: Data) -> String? {
        guard let error = errorObject(body), let status = error["status"] as? String,
            !status.isEmpty, status.utf8.count <= 64,
            status.utf8.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || $0 == UInt8(ascii: "_") })
        else { return nil }
        return status
    }

    /// `: STATUS: message`, printable and bounded, with `secret` redacted; empty without one.
    static func detail(_ body: Data, hiding secret: String) -> String {
        guard let error = errorObject(body) else { return "" }
        var text = status(body) ?? ""
        if let message = error["message"] as? String, !message.isEmpty {
            text += text.isEmpty ? message : ": \(message)"
        }
        guard !text.isEmpty else { return "" }
        return ": " + Printable.quoted(GrantRequest.quoted(text, hiding: [secret]))
    }

    private static func errorObject(_ body: Data) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: body) as? [String: Any])?["error"] as? [String: Any]
    }
}

/// Server-written text made safe for a terminal.
enum Printable {
    /// `text` with every control character (C0, DEL, C1), bidi control and line or paragraph
    /// separator replaced by `?`.
    static func quoted(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0..<0x20, 0x7F..<0xA0, 0x200E, 0x200F, 0x2028...0x202E, 0x2066...0x2069:
                scalars.append("?")
            default:
                scalars.append(scalar)
            }
        }
        return String(scalars)
    }
}

/// RFC 3339 timestamps as Google's APIs write them (`2026-01-02T03:04:05Z`, with or without
/// fractional seconds, `Z` or an offset).
enum RFC3339 {
    static func date(_ text: String) -> Date? {
        guard text.utf8.count <= 64 else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}
