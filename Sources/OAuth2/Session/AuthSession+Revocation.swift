extension AuthSession {
    /// Signs out at the authorization server: revokes the refresh token (the whole grant), or the
    /// access token when there is none, then forgets both tokens. The stored session is saved
    /// without tokens (under the store's lock); removing it is the caller's choice. A refresh
    /// still in flight when the tokens are forgotten is dropped when it answers, so neither its
    /// tokens nor its `invalid_grant` come back.
    ///
    /// - Throws: ``OAuthError`` from the revocation endpoint; the tokens are kept when it fails.
    public func revoke() async throws(OAuthError) {
        let current = state
        if let refreshToken = current.refreshToken {
            try await TokenRevocation.revoke(
                refreshToken,
                hint: .refreshToken,
                configuration: current.configuration,
                client: current.client,
                transport: transport
            )
        } else if let accessToken = current.accessToken {
            try await TokenRevocation.revoke(
                accessToken,
                hint: .accessToken,
                configuration: current.configuration,
                client: current.client,
                transport: transport
            )
        }
        var signedOut = state
        signedOut.accessToken = nil
        signedOut.accessTokenExpiresAt = nil
        signedOut.refreshToken = nil
        signedOut.idToken = nil
        await replaceState(signedOut)
    }
}
