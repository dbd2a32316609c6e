import Foundation
import OAuth2

// TEMPORARY seam: replaced by wp-google's IAM Credentials client when it lands.
enum ServiceAccountImpersonation {
    static func generateAccessToken(
        at url: URL,
        sourceToken: String,
        scopes: [String],
        lifetime: Duration,
        transport: any OAuthTransport
    ) async throws(OAuthError) -> FetchedAccessToken {
        throw OAuthError(.invalidConfiguration, "impersonation is not wired yet")
    }
}
