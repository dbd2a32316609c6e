import Foundation
import OAuth2

/// The one way a subject-token source's requests go out (a url source's GET, the AWS instance
/// metadata service's): through the OAuth transport and its rules (no redirects, a bounded
/// answer, a timeout).
///
/// Over plain http, such a request may go only to loopback or to the metadata servers named
/// (``MetadataServerHosts``: AWS's for the aws source, the clouds' link-local addresses for a
/// url source), never to a host on a network: the
/// headers a credential file names and AWS's IMDSv2 session token are secrets too, and there they
/// never leave the machine. A body or an `Authorization` header (a GitHub Actions token request,
/// with its bearer request token) stays https (or loopback).
enum SourceRequest {
    static func send(
        _ request: OAuthHTTPRequest,
        transport: any OAuthTransport,
        purpose: String,
        metadataServers: MetadataHosts
    ) async throws(OAuthError) -> OAuthHTTPResponse {
        try await GrantRequest.send(
            request,
            transport: transport,
            purpose: purpose,
            plaintext: .metadataServers(metadataServers)
        )
    }
}
