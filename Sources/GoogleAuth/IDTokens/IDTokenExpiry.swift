import Foundation
import OAuth2

/// When an ID token expires, read from the token itself: Google's ID token answers (the metadata
/// server's `identity`, IAM's `generateIdToken`, the token endpoint's `id_token`) carry no
/// lifetime beside the token, so its `exp` claim is the only word on it.
///
/// The signature is not verified here: the token came straight from the endpoint over a
/// connection this package checked, and the service it is sent to verifies it.
enum IDTokenExpiry {
    /// The longest lifetime taken: Google's ID tokens live an hour.
    static let maximumLifetime: Duration = .seconds(24 * 3600)

    /// `token` as a fetched token whose lifetime runs from `receivedAt` to its `exp`.
    ///
    /// - Throws: ``/OAuth2/OAuthError/Kind/transient`` naming `server` when the token is not a
    ///   compact JWT that fits in an `Authorization` header, has no numeric `exp`, has already
    ///   expired, or expires more than a day away. The token is never quoted.
    static func fetched(_ token: String, receivedAt: Date, from server: String) throws(OAuthError) -> FetchedAccessToken
    {
        guard TokenSyntax.isBearerToken(token), TokenSyntax.isCompactJWT(token) else {
            throw OAuthError(
                .transient,
                "\(server) answered with an ID token that is not a JWT of at most \(TokenSyntax.maximumAccessTokenLength) bytes"
            )
        }
        guard let exp = expiry(of: token) else {
            throw OAuthError(.transient, "\(server) answered with an ID token without a numeric exp claim")
        }
        let seconds = exp.timeIntervalSince(receivedAt)
        guard seconds > 0 else {
            throw OAuthError(
                .transient,
                "\(server) answered with an ID token that has already expired (is this machine's clock right?)"
            )
        }
        guard seconds <= Double(maximumLifetime.components.seconds) else {
            throw OAuthError(.transient, "\(server) answered with an ID token whose exp is more than a day away")
        }
        return FetchedAccessToken(
            accessToken: token,
            receivedAt: receivedAt,
            lifetime: .milliseconds(Int64((seconds * 1000).rounded())),
            tokenType: "Bearer"
        )
    }

    /// The `exp` claim of the compact JWT `token`, or `nil` when there is none.
    static func expiry(of token: String) -> Date? {
        guard let claims = JWTPayload.claims(of: token, signed: true),
            let exp = JSONNumber.value(of: claims["exp"]), exp.isFinite, claims["exp"] is NSNumber
        else { return nil }
        return Date(timeIntervalSince1970: exp)
    }
}
