package import Foundation

extension GrantRequest {
    /// POSTs a grant whose answer is an ID token rather than an access token — Google's token
    /// endpoint answers a service account's JWT bearer grant with `{"id_token": "…"}` when the
    /// assertion asks for a `target_audience` — and returns that token, unchecked but for being
    /// a string of at most ``TokenSyntax/maximumIDTokenLength`` bytes, and when it arrived.
    ///
    /// Refusals are read as every token answer is (``TokenAnswer``): an OAuth `error` is an
    /// authorization error, 408/429/5xx are transient, and no error quotes `secrets` or the
    /// form's secret parameters.
    ///
    /// - Throws: ``OAuthError``: as ``requestToken(at:parameters:client:secrets:transport:)``;
    ///   ``OAuthError/Kind/transient`` for a 2xx answer without a usable `id_token`.
    package static func requestIDToken(
        at tokenEndpoint: URL,
        parameters: [(String, String)],
        secrets: [String],
        transport: any OAuthTransport
    ) async throws(OAuthError) -> (idToken: String, receivedAt: Date) {
        let request = OAuthHTTP.formRequest(to: tokenEndpoint, parameters: parameters, client: nil)
        let response = try await OAuthHTTP.send(request, transport: transport, purpose: "token")
        let receivedAt = Date()
        let server = "the token endpoint \(tokenEndpoint.redacted)"
        if (200..<300).contains(response.statusCode), let fields = JSONFields(parsing: response.body),
            let token = try? fields.string("id_token")
        {
            guard token.utf8.count <= TokenSyntax.maximumIDTokenLength else {
                throw OAuthError(
                    .transient,
                    "\(server) answered with an id_token longer than \(TokenSyntax.maximumIDTokenLength) bytes"
                )
            }
            return (token, receivedAt)
        }
        let hidden = secrets + parameters.filter { $0.0 == "assertion" }.map(\.1)
        switch try TokenAnswer.classify(response, from: tokenEndpoint, hiding: hidden) {
        case .success, .failure:
            throw OAuthError(.transient, "\(server) answered HTTP \(response.statusCode) without an id_token")
        }
    }
}
