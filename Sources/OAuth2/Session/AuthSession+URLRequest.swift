import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

extension AuthSession {
    /// Adds `Authorization: Bearer <fresh token>` to a plain HTTP request (a REST API next to the
    /// gRPC one), refreshing first when needed.
    ///
    /// The token is only sent over `https`, or `http` to a loopback address: a bearer token on
    /// plain HTTP across a network can be read by anyone on the path. It is always an RFC 6750
    /// `b64token`: a stored token a header cannot carry (line breaks, spaces, non-ASCII, over
    /// 16 KiB) does not count as fresh, so the session refreshes rather than sending it.
    ///
    /// - Throws: ``OAuthError``: `invalidConfiguration` for a URL the token must not go to, or
    ///   what ``freshAccessToken()`` throws. The request is unchanged when it throws.
    public nonisolated func authorize(_ request: inout URLRequest) async throws(OAuthError) {
        guard let url = request.url, EndpointSecurity.allows(url) else {
            throw OAuthError(
                .invalidConfiguration,
                "refusing to send an access token to \(request.url?.redacted ?? "a request without a URL"): use https"
            )
        }
        let token = try await freshAccessToken()
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
    }
}
