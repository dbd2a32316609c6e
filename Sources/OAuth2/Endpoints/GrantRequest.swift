package import Foundation

/// Requests to token endpoints and metadata servers for the credential sources other targets of
/// this package build on OAuth2 (GoogleAuth's service accounts, authorized users and Compute
/// Engine): they go out through the same transport as every OAuth request, and token answers
/// are classified in the one place ``TokenEndpoint``'s are (``TokenAnswer``).
package enum GrantRequest {
    /// The longest server-written text (`error_description`) an error message quotes.
    package static var maximumQuotedLength: Int { TokenAnswer.maximumQuotedLength }

    /// POSTs a grant to `tokenEndpoint` and returns the token it answers with.
    ///
    /// - Parameters:
    ///   - parameters: The form: `grant_type` and its parameters.
    ///   - client: How the client authenticates, or `nil` for a grant that needs no client (the
    ///     JWT bearer grant).
    ///   - secrets: Values of the request that must never be quoted back, beyond the form's
    ///     secret parameters (an assertion, a refresh token) and the client secret, which are
    ///     always hidden: an error message that would contain one says `<redacted>` instead.
    /// - Throws: ``OAuthError/Kind/authorization`` for an OAuth `error` (but
    ///   `temporarily_unavailable`); ``OAuthError/Kind/transient`` for no answer, a 5xx, a
    ///   408/429, or an answer that does not parse or breaks the rules of ``TokenResponse``.
    package static func requestToken(
        at tokenEndpoint: URL,
        parameters: [(String, String)],
        client: OAuthClient?,
        secrets: [String],
        transport: any OAuthTransport
    ) async throws(OAuthError) -> FetchedAccessToken {
        let (answer, receivedAt) = try await TokenAnswer.exchange(
            at: tokenEndpoint,
            parameters: parameters,
            client: client,
            extraSecrets: secrets,
            transport: transport
        )
        switch answer {
        case .success(let response):
            return fetched(response, receivedAt: receivedAt)
        case .failure(let invalid):
            throw TokenAnswer.unusable(invalid, from: "the token endpoint \(tokenEndpoint.redacted)")
        }
    }

    /// Sends `request`; a failure to get any answer is ``OAuthError/Kind/transient``.
    ///
    /// - Parameter plaintext: Where the request may go over plain http beyond loopback, when it
    ///   carries no secret (no body, no `Authorization` header): the metadata server, or exactly
    ///   the URL a credential file names. A request that carries a secret goes over https only,
    ///   whatever this says (``EndpointSecurity``).
    /// - Throws: ``OAuthError/Kind/invalidConfiguration`` before anything is sent when the
    ///   request may not go to its URL; ``OAuthError/Kind/transient`` when no answer came.
    package static func send(
        _ request: OAuthHTTPRequest,
        transport: any OAuthTransport,
        purpose: String,
        plaintext: PlaintextAllowance = .none
    ) async throws(OAuthError) -> OAuthHTTPResponse {
        try await OAuthHTTP.send(request, transport: transport, purpose: purpose, plaintext: plaintext)
    }

    /// A token endpoint's (or metadata server's) JSON answer, checked as ``TokenResponse`` checks
    /// every token answer (a bearer token, `token_type` Bearer, `expires_in` within bounds).
    ///
    /// - Throws: ``OAuthError/Kind/transient`` naming what is wrong (never a token), with the
    ///   ``InvalidTokenResponse`` as its `underlying`; `server` says who answered.
    package static func token(
        in body: Data,
        receivedAt: Date,
        from server: String
    ) throws(OAuthError) -> FetchedAccessToken {
        do throws(InvalidTokenResponse) {
            return fetched(try TokenResponse(json: body), receivedAt: receivedAt)
        } catch {
            throw TokenAnswer.unusable(error, from: server)
        }
    }

    private static func fetched(_ response: TokenResponse, receivedAt: Date) -> FetchedAccessToken {
        FetchedAccessToken(
            accessToken: response.accessToken,
            receivedAt: receivedAt,
            lifetime: response.expiresIn.map { .milliseconds(Int64(($0 * 1000).rounded())) },
            tokenType: response.tokenType,
            grantedScopes: response.scopes
        )
    }

    /// `url` without its query, fragment and user information, for messages.
    package static func redacted(_ url: URL) -> String {
        url.redacted
    }

    /// Server-written text made fit to quote: at most ``maximumQuotedLength`` characters, and
    /// any of `secrets` it contains replaced by `<redacted>`.
    package static func quoted(_ text: String, hiding secrets: [String]) -> String {
        TokenAnswer.quoted(text, hiding: secrets)
    }
}
