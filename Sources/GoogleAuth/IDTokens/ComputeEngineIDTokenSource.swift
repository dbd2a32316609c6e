import Foundation
public import Logging
public import OAuth2

/// ID tokens for a Compute Engine instance's (or Cloud Run service's, or GKE workload's) service
/// account, from the metadata server:
/// `GET http://<host>/computeMetadata/v1/instance/service-accounts/default/identity?audience=AUD&format=full`
/// with `Metadata-Flavor: Google`, as google-auth's Compute Engine ID-token credentials ask.
///
/// The answer is the token itself; its lifetime is read from its own `exp` claim. The metadata
/// server's rules are ``ComputeEngineTokenSource``'s: an answer without `Metadata-Flavor: Google`
/// is refused, and so is one larger than 64 KiB. Hold it in ``GoogleCredentials`` to cache
/// tokens and send them as `Authorization: Bearer` to a private Cloud Run or IAP-fronted service.
public struct ComputeEngineIDTokenSource: GoogleTokenSource {
    /// The audience the tokens are for: the receiving service's URL (Cloud Run) or OAuth client
    /// id (IAP).
    public let audience: String
    /// `HOST` or `HOST:PORT` of the metadata server.
    public var host: String { metadata.host }

    private let metadata: ComputeEngineTokenSource
    private let logger: Logger

    /// A source asking the metadata server at `host` for ID tokens for `audience`.
    ///
    /// - Throws: ``/OAuth2/OAuthError/Kind/invalidConfiguration`` when `host` is not `HOST[:PORT]`
    ///   or `audience` is empty, longer than 2048 bytes or has whitespace.
    public init(
        audience: String,
        host: String = ComputeEngineTokenSource.defaultHost,
        transport: any OAuthTransport = HTTP1OAuthTransport.standard,
        logger: Logger = Logger(label: "swift-authrpc.google")
    ) throws(OAuthError) {
        try IDTokenAudience.check(audience)
        self.audience = audience
        metadata = try ComputeEngineTokenSource(host: host, transport: transport, logger: logger)
        self.logger = logger
    }

    /// Asks the metadata server for an ID token for ``audience``.
    ///
    /// - Throws: ``/OAuth2/OAuthError`` as ``ComputeEngineTokenSource/fetchToken()`` does, and
    ///   ``/OAuth2/OAuthError/Kind/transient`` for an answer that is not a JWT with an `exp`.
    public func fetchToken() async throws(OAuthError) -> FetchedAccessToken {
        let path =
            "/computeMetadata/v1/instance/service-accounts/default/identity?audience="
            + ComputeEngineTokenSource.percentEncoded(audience) + "&format=full"
        logger.debug(
            "asking the metadata server for an ID token",
            metadata: ["host": "\(host)", "audience": "\(audience)"]
        )
        let response = try await metadata.get(path, purpose: "metadata identity")
        let token = String(decoding: response.body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return try IDTokenExpiry.fetched(token, receivedAt: Date(), from: "the metadata server at \(host)")
    }

    /// The instance's default account, as ``ComputeEngineTokenSource`` names it.
    public var identity: GoogleCredentialIdentity { metadata.identity }

    /// The host and the audience.
    public var description: String {
        "ComputeEngineIDTokenSource(metadata server at \(host), audience \(audience))"
    }
}

/// What an ID token's audience may be: it travels in a URL query, a JSON body or a JWT claim.
enum IDTokenAudience {
    static func check(_ audience: String) throws(OAuthError) {
        guard !audience.isEmpty, audience.utf8.count <= 2048,
            !audience.contains(where: { $0.isWhitespace || $0.isNewline }),
            audience.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
        else {
            throw OAuthError(
                .invalidConfiguration,
                "an ID token's audience must be 1 to 2048 printable characters without spaces (a service URL or client id)"
            )
        }
    }
}
