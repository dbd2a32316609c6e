import Foundation
import OAuth2

/// The one way a subject-token source's requests go out (a url source's GET, the AWS instance
/// metadata service's): through the OAuth transport and its rules (no redirects, a bounded
/// answer, a timeout).
///
/// Every URL sent to here is one the credential file names for its source (AWS's role path is
/// the file's `url` and the role name the service gave), so plain http is allowed to exactly that
/// URL, and only for a request that carries no secret (no body, no `Authorization` header:
/// `PlaintextAllowance`): an instance metadata service is http only and never leaves
/// the host. A GitHub Actions token request, with its bearer request token, stays https (or
/// loopback).
enum SourceRequest {
    static func send(
        _ request: OAuthHTTPRequest,
        transport: any OAuthTransport,
        purpose: String
    ) async throws(OAuthError) -> OAuthHTTPResponse {
        try await GrantRequest.send(
            request,
            transport: transport,
            purpose: purpose,
            plaintext: .exactly(request.url)
        )
    }
}
