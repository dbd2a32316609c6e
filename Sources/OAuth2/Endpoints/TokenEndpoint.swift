import Foundation

/// Talks to one token endpoint for one client (``TokenAnswer`` classifies its answers).
struct TokenEndpoint: Sendable {
    let configuration: ServiceConfiguration
    let client: OAuthClient
    let transport: any OAuthTransport

    /// Exchanges a grant (`grant_type` and its parameters) for tokens.
    ///
    /// - Throws: ``OAuthError/Kind/authorization`` for a 4xx with an OAuth `error`;
    ///   ``OAuthError/Kind/transient`` for no answer, a 5xx, a 408/429, or an answer that does
    ///   not parse or breaks the rules of ``TokenResponse`` (then the error's `underlying` is an
    ///   ``InvalidTokenResponse``); ``OAuthError/Kind/invalidConfiguration`` for an endpoint
    ///   that is not https off loopback, or that redirects.
    func requestToken(_ parameters: [(String, String)]) async throws(OAuthError) -> TokenResponse {
        switch try await exchange(parameters) {
        case .success(let response): return response
        case .failure(let invalid): throw unusable(invalid)
        }
    }

    /// ``requestToken(_:)``, but a 2xx answer that breaks the rules comes back as what was wrong
    /// with it (and any well-formed rotated refresh token it carried) instead of an error.
    /// ``TokenAnswer`` classifies the answer.
    func exchange(
        _ parameters: [(String, String)]
    ) async throws(OAuthError) -> Result<TokenResponse, InvalidTokenResponse> {
        try await TokenAnswer.exchange(
            at: configuration.tokenEndpoint,
            parameters: parameters,
            client: client,
            transport: transport
        ).answer
    }

    /// The error for an unusable 2xx answer: transient (the grant may well be fine), naming what
    /// was wrong and never a token.
    func unusable(_ invalid: InvalidTokenResponse) -> OAuthError {
        TokenAnswer.unusable(invalid, from: "the token endpoint \(configuration.tokenEndpoint.redacted)")
    }

    /// `grant_type=refresh_token`.
    func refresh(_ refreshToken: String) async throws(OAuthError) -> Result<TokenResponse, InvalidTokenResponse> {
        try await exchange([("grant_type", "refresh_token"), ("refresh_token", refreshToken)])
    }

    /// `grant_type=client_credentials`.
    func clientCredentials(scopes: [String]) async throws(OAuthError) -> TokenResponse {
        var parameters = [("grant_type", "client_credentials")]
        if !scopes.isEmpty { parameters.append(("scope", scopes.joined(separator: " "))) }
        return try await requestToken(parameters)
    }
}
