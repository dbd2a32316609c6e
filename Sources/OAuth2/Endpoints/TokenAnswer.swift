import Foundation

/// The one reading of a token endpoint's answer, for every grant this package sends: the
/// session's and the flows' (``TokenEndpoint``) and the Google credentials' (``GrantRequest``).
///
/// - 2xx: a ``TokenResponse`` checked field by field, or what is wrong with it; an OAuth error
///   sent with a 2xx (GitHub's device flow does) is that error.
/// - 408, 429, 5xx: transient.
/// - Any other status with an OAuth `error`: the grant was refused (an authorization error), but
///   `temporarily_unavailable` is transient. Without one: transient.
///
/// Text the server wrote is quoted at most ``maximumQuotedLength`` characters long, with every
/// secret the request carried (a refresh token, an assertion, a client secret, ...) replaced by
/// `<redacted>`, so a server that echoes the request cannot put a secret in an error.
enum TokenAnswer {
    /// The longest server-written text (`error`, `error_description`) an error message quotes.
    static let maximumQuotedLength = 200

    /// Form parameters whose values are secrets.
    private static let secretParameters: Set<String> = [
        "refresh_token", "code", "code_verifier", "device_code", "assertion", "client_secret", "password",
    ]

    /// POSTs a grant (`grant_type` and its parameters) to `url`, the client authenticated as it is
    /// configured, and reads the answer.
    ///
    /// - Parameter extraSecrets: More values no error may quote, beyond the form's secret
    ///   parameters and the client's secret.
    /// - Returns: The checked answer (or what is wrong with it) and when it arrived.
    /// - Throws: ``OAuthError`` as described on the type; ``OAuthError/Kind/invalidConfiguration``
    ///   for an endpoint that is not https off loopback, or that redirects.
    static func exchange(
        at url: URL,
        parameters: [(String, String)],
        client: OAuthClient?,
        extraSecrets: [String] = [],
        transport: any OAuthTransport
    ) async throws(OAuthError) -> (answer: Result<TokenResponse, InvalidTokenResponse>, receivedAt: Date) {
        let request = OAuthHTTP.formRequest(to: url, parameters: parameters, client: client)
        let response = try await OAuthHTTP.send(request, transport: transport, purpose: "token")
        let receivedAt = Date()
        var secrets = extraSecrets + parameters.filter { secretParameters.contains($0.0) }.map(\.1)
        if let secret = client?.secret { secrets.append(secret) }
        return (try classify(response, from: url, hiding: secrets), receivedAt)
    }

    /// Classifies `response` from the token endpoint at `endpoint`.
    static func classify(
        _ response: OAuthHTTPResponse,
        from endpoint: URL,
        hiding secrets: [String]
    ) throws(OAuthError) -> Result<TokenResponse, InvalidTokenResponse> {
        let server = "the token endpoint \(endpoint.redacted)"
        switch response.statusCode {
        case 200..<300:
            do throws(InvalidTokenResponse) {
                return .success(try TokenResponse(json: response.body))
            } catch {
                if let refusal = OAuthErrorResponse(json: response.body) {
                    throw self.error(for: refusal, from: server, hiding: secrets)
                }
                return .failure(error)
            }
        case 408, 429, 500...:
            throw OAuthError(.transient, "\(server) answered HTTP \(response.statusCode); try again later")
        default:
            guard let refusal = OAuthErrorResponse(json: response.body) else {
                throw OAuthError(.transient, "\(server) answered HTTP \(response.statusCode) without an OAuth error")
            }
            throw error(for: refusal, from: server, hiding: secrets)
        }
    }

    /// The error for an unusable 2xx answer from `server`: transient (the grant may well be fine),
    /// naming what was wrong and never a token.
    static func unusable(_ invalid: InvalidTokenResponse, from server: String) -> OAuthError {
        OAuthError(
            .transient,
            "\(server) answered with an unusable token response: \(invalid.reason)",
            underlying: invalid.withoutSecrets
        )
    }

    /// An OAuth error answer as an error: `temporarily_unavailable` is transient, the rest refuse the grant.
    private static func error(
        for refusal: OAuthErrorResponse,
        from server: String,
        hiding secrets: [String]
    ) -> OAuthError {
        let summary = refusal.summary(hiding: secrets, limit: maximumQuotedLength)
        if refusal.code == "temporarily_unavailable" {
            return OAuthError(.transient, "\(server) is temporarily unavailable: \(summary)")
        }
        return OAuthError(
            .authorization,
            "the authorization server refused the grant: \(summary)",
            oauthErrorCode: quoted(refusal.code, hiding: secrets)
        )
    }

    /// Server-written text made fit to quote: any of `secrets` it contains replaced by
    /// `<redacted>`, then cut to ``maximumQuotedLength`` characters.
    static func quoted(_ text: String, hiding secrets: [String]) -> String {
        var text = text
        for secret in secrets where !secret.isEmpty {
            text = text.replacingOccurrences(of: secret, with: "<redacted>")
        }
        return text.count > maximumQuotedLength ? String(text.prefix(maximumQuotedLength)) + "…" : text
    }
}
