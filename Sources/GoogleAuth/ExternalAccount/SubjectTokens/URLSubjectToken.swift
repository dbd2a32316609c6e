import Foundation
import OAuth2

/// The url source: `GET` the URL with the headers the file names (GitHub Actions' OIDC token
/// with its bearer request token, Azure's instance metadata service with `Metadata: True`, ...),
/// the answer's text or JSON field being the token.
///
/// The request goes through the package's one OAuth path (``/OAuth2/OAuthTransport``, no
/// redirects followed, a bounded answer, a timeout). Plain http is allowed to exactly this URL
/// when the request carries no secret (no `Authorization` header): an instance metadata service
/// is http only and never leaves the host.
enum URLSubjectToken {
    /// How long the source may take to answer.
    static let timeout: Duration = .seconds(30)

    static func fetch(
        _ url: URL,
        headers: [(name: String, value: String)],
        format: ExternalAccountCredentialSource.Format,
        transport: any OAuthTransport
    ) async throws(OAuthError) -> String {
        let request = OAuthHTTPRequest(
            url: url,
            method: "GET",
            headers: headers,
            timeout: timeout,
            maximumResponseBodySize: SubjectTokenText.maximumSize
        )
        let response = try await SourceRequest.send(
            request,
            transport: transport,
            purpose: "subject token",
            metadataServers: MetadataServerHosts.credentialSources
        )
        let place = "the answer of \(GrantRequest.redacted(url))"
        guard response.statusCode == 200 else {
            let body = QuotedText.quote(
                String(decoding: response.body.prefix(1024), as: UTF8.self),
                hiding: headers.map(\.value)
            )
            let kind: OAuthError.Kind =
                [408, 429].contains(response.statusCode) || response.statusCode >= 500
                ? .transient : .invalidConfiguration
            throw OAuthError(
                kind,
                "\(GrantRequest.redacted(url)) answered HTTP \(response.statusCode)\(body.isEmpty ? "" : ": \(body)")"
            )
        }
        return try SubjectTokenText.token(in: response.body, format: format, from: place)
    }
}
