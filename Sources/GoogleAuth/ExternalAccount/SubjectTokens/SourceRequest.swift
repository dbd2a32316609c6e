import Foundation
import OAuth2

/// The one way a subject-token source's requests go out (a url source's GET, the AWS instance
/// metadata service's): through the OAuth transport and its rules (no redirects, a bounded
/// answer, a timeout), plain http allowed only to `url`, which the credential file names.
enum SourceRequest {
    static func send(
        _ request: OAuthHTTPRequest,
        transport: any OAuthTransport,
        purpose: String
    ) async throws(OAuthError) -> OAuthHTTPResponse {
        try await GrantRequest.send(request, transport: transport, purpose: purpose)
    }
}
