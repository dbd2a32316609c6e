import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension AuthSession {
    /// Adds `Authorization: Bearer <fresh token>` to a plain HTTP request (a REST API next to the
    /// gRPC one), refreshing first when needed.
    ///
    /// The token is only sent over `https`, or `http` to a loopback address: a bearer token on
    /// plain HTTP across a network can be read by anyone on the path.
    ///
    /// - Throws: ``OAuthError``: `invalidConfiguration` for a URL the token must not go to, or
    ///   what ``freshAccessToken()`` throws.
    public nonisolated func authorize(_ request: inout URLRequest) async throws(OAuthError) {
        guard let url = request.url, Self.mayCarryBearerToken(url) else {
            throw OAuthError(.invalidConfiguration, "refusing to send an access token to \(request.url?.redacted ?? "a request without a URL"): use https")
        }
        let token = try await freshAccessToken()
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
    }

    static func mayCarryBearerToken(_ url: URL) -> Bool {
        switch url.scheme?.lowercased() {
        case "https": return true
        case "http": return ["127.0.0.1", "::1", "[::1]", "localhost"].contains(url.host?.lowercased() ?? "")
        default: return false
        }
    }
}
