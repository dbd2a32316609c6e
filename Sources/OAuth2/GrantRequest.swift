import Foundation

/// Requests to token endpoints and metadata servers for the credential sources other targets of
/// this package build on OAuth2 (GoogleAuth's service accounts, authorized users and Compute
/// Engine): they go out through the same transport as every OAuth request, and token answers
/// are classified as ``TokenEndpoint`` classifies its own.
package enum GrantRequest {
    /// The longest server-written text (`error_description`) an error message quotes.
    package static let maximumQuotedLength = 200

    /// POSTs a grant to `tokenEndpoint` and returns the token it answers with.
    ///
    /// - Parameters:
    ///   - parameters: The form: `grant_type` and its parameters.
    ///   - client: How the client authenticates, or `nil` for a grant that needs no client (the
    ///     JWT bearer grant).
    ///   - secrets: Values of the request that must never be quoted back (an assertion, a
    ///     refresh token): an error message that would contain one says `<redacted>` instead.
    /// - Throws: ``OAuthError/Kind/authorization(code:)`` for a 4xx with an OAuth `error`;
    ///   ``OAuthError/Kind/transient`` for no answer, a 5xx, a 408/429, or an answer that does
    ///   not parse.
    package static func requestToken(
        at tokenEndpoint: URL,
        parameters: [(String, String)],
        client: OAuthClient?,
        secrets: [String],
        transport: any OAuthTransport
    ) async throws(OAuthError) -> FetchedAccessToken {
        let request = OAuthHTTP.formRequest(to: tokenEndpoint, parameters: parameters, client: client)
        let response = try await OAuthHTTP.send(request, transport: transport, purpose: "token")
        let receivedAt = Date()
        let endpoint = tokenEndpoint.redacted
        switch response.statusCode {
        case 200..<300:
            return try token(in: response.body, receivedAt: receivedAt, from: "the token endpoint \(endpoint)")
        case 408, 429, 500...:
            throw OAuthError(.transient, "the token endpoint \(endpoint) answered HTTP \(response.statusCode); try again later")
        default:
            guard let error = OAuthErrorResponse(json: response.body) else {
                throw OAuthError(.transient, "the token endpoint \(endpoint) answered HTTP \(response.statusCode) without an OAuth error")
            }
            let summary = quoted(error.summary, hiding: secrets)
            if error.code == "temporarily_unavailable" {
                throw OAuthError(.transient, "the token endpoint \(endpoint) is temporarily unavailable: \(summary)")
            }
            throw OAuthError(.authorization(code: quoted(error.code, hiding: secrets)), "the authorization server refused the grant: \(summary)")
        }
    }

    /// Sends `request`; a failure to get any answer is ``OAuthError/Kind/transient``.
    package static func send(_ request: OAuthHTTPRequest, transport: any OAuthTransport, purpose: String) async throws(OAuthError) -> OAuthHTTPResponse {
        try await OAuthHTTP.send(request, transport: transport, purpose: purpose)
    }

    /// A token endpoint's (or metadata server's) JSON answer, checked as ``TokenResponse`` checks
    /// every token answer (a bearer token, `token_type` Bearer, `expires_in` within bounds).
    ///
    /// - Throws: ``OAuthError/Kind/transient`` naming what is wrong (never a token), with the
    ///   ``InvalidTokenResponse`` as its `underlying`; `server` says who answered.
    package static func token(in body: Data, receivedAt: Date, from server: String) throws(OAuthError) -> FetchedAccessToken {
        let response: TokenResponse
        do throws(InvalidTokenResponse) {
            response = try TokenResponse(json: body)
        } catch {
            throw OAuthError(.transient, "\(server) answered with an unusable token response: \(error.reason)", underlying: error.withoutSecrets)
        }
        return FetchedAccessToken(
            accessToken: response.accessToken,
            receivedAt: receivedAt,
            lifetime: response.expiresIn.map { .milliseconds(Int64(($0 * 1000).rounded())) },
            tokenType: response.tokenType,
            grantedScopes: response.scopes)
    }

    /// `url` without its query, fragment and user information, for messages.
    package static func redacted(_ url: URL) -> String {
        url.redacted
    }

    /// Server-written text made fit to quote: at most ``maximumQuotedLength`` characters, and
    /// any of `secrets` it contains replaced by `<redacted>`.
    package static func quoted(_ text: String, hiding secrets: [String]) -> String {
        var text = text
        for secret in secrets where !secret.isEmpty {
            text = text.replacingOccurrences(of: secret, with: "<redacted>")
        }
        return text.count > maximumQuotedLength ? String(text.prefix(maximumQuotedLength)) + "…" : text
    }
}
