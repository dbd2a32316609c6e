import Foundation

/// Talks to one token endpoint for one client and classifies its answers.
struct TokenEndpoint: Sendable {
    let configuration: ServiceConfiguration
    let client: OAuthClient
    let transport: any OAuthTransport

    /// Exchanges a grant (`grant_type` and its parameters) for tokens.
    ///
    /// - Throws: ``OAuthError/Kind/authorization(code:)`` for a 4xx with an OAuth `error`;
    ///   ``OAuthError/Kind/transient`` for no answer, a 5xx, a 408/429, or an answer that does
    ///   not parse.
    func requestToken(_ parameters: [(String, String)]) async throws(OAuthError) -> TokenResponse {
        let request = OAuthHTTP.formRequest(to: configuration.tokenEndpoint, parameters: parameters, client: client)
        let response = try await OAuthHTTP.send(request, transport: transport, purpose: "token")
        let endpoint = configuration.tokenEndpoint.redacted
        switch response.statusCode {
        case 200..<300:
            guard let token = TokenResponse(json: response.body) else {
                throw OAuthError(.transient, "the token endpoint \(endpoint) answered HTTP \(response.statusCode) without a usable access token")
            }
            return token
        case 408, 429, 500...:
            throw OAuthError(.transient, "the token endpoint \(endpoint) answered HTTP \(response.statusCode); try again later")
        default:
            guard let error = OAuthErrorResponse(json: response.body) else {
                throw OAuthError(.transient, "the token endpoint \(endpoint) answered HTTP \(response.statusCode) without an OAuth error")
            }
            if error.code == "temporarily_unavailable" {
                throw OAuthError(.transient, "the token endpoint \(endpoint) is temporarily unavailable: \(error.summary)")
            }
            throw OAuthError(.authorization(code: error.code), "the authorization server refused the grant: \(error.summary)")
        }
    }

    /// `grant_type=refresh_token`.
    func refresh(_ refreshToken: String) async throws(OAuthError) -> TokenResponse {
        try await requestToken([("grant_type", "refresh_token"), ("refresh_token", refreshToken)])
    }

    /// `grant_type=client_credentials`.
    func clientCredentials(scopes: [String]) async throws(OAuthError) -> TokenResponse {
        var parameters = [("grant_type", "client_credentials")]
        if !scopes.isEmpty { parameters.append(("scope", scopes.joined(separator: " "))) }
        return try await requestToken(parameters)
    }
}
