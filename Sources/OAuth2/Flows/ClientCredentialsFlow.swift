import Foundation

/// The client credentials grant (RFC 6749 section 4.4): a confidential client acting for itself,
/// with no user. A session made from it renews its token by asking again.
public enum ClientCredentialsFlow {
    /// Asks the token endpoint for a token for `client` itself.
    ///
    /// - Throws: ``OAuthError``: an authorization error when the server refuses the client,
    ///   `transient` when it cannot be reached.
    public static func authorize(
        configuration: ServiceConfiguration,
        client: OAuthClient,
        scopes: [String],
        transport: any OAuthTransport = HTTP1OAuthTransport.standard
    ) async throws(OAuthError) -> AuthState {
        let endpoint = TokenEndpoint(configuration: configuration, client: client, transport: transport)
        let response = try await endpoint.clientCredentials(scopes: scopes)
        var state = AuthState(
            configuration: configuration,
            client: client,
            scopes: scopes,
            grant: GrantRecord(type: .clientCredentials)
        )
        state.apply(response, receivedAt: Date())
        return state
    }
}
