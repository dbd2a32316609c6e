import Foundation

/// Token revocation (RFC 7009), used when signing out.
public enum TokenRevocation {
    /// Which kind of token is revoked (`token_type_hint`).
    public enum Hint: String, Sendable {
        /// An access token.
        case accessToken = "access_token"
        /// A refresh token; servers revoke the whole grant with it.
        case refreshToken = "refresh_token"
    }

    /// Revokes `token` at the revocation endpoint. A 200 means done, also for a token the server
    /// did not know (RFC 7009 section 2.2).
    ///
    /// - Throws: ``OAuthError``: `invalidConfiguration` without a revocation endpoint, an
    ///   authorization error when the server refuses the client, `transient` when it cannot be
    ///   reached or answers with a server error.
    public static func revoke(
        _ token: String,
        hint: Hint,
        configuration: ServiceConfiguration,
        client: OAuthClient,
        transport: any OAuthTransport = HTTP1OAuthTransport.standard
    ) async throws(OAuthError) {
        guard let endpoint = configuration.revocationEndpoint else {
            throw OAuthError(.invalidConfiguration, "the authorization server has no revocation endpoint")
        }
        let request = OAuthHTTP.formRequest(
            to: endpoint,
            parameters: [("token", token), ("token_type_hint", hint.rawValue)],
            client: client
        )
        let response = try await OAuthHTTP.send(request, transport: transport, purpose: "revocation")
        switch response.statusCode {
        case 200..<300:
            return
        case 400..<500 where response.statusCode != 408 && response.statusCode != 429:
            let error = OAuthErrorResponse(json: response.body)
            throw OAuthError(
                .authorization,
                "the revocation endpoint refused: \(error?.summary ?? "HTTP \(response.statusCode)")",
                oauthErrorCode: error?.code ?? "http_\(response.statusCode)"
            )
        default:
            throw OAuthError(
                .transient,
                "the revocation endpoint \(endpoint.redacted) answered HTTP \(response.statusCode); try again later"
            )
        }
    }
}
