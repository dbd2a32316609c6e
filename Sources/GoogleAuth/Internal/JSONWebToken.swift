import AuthCrypto
import AuthRPCSyntax
import Foundation

/// The claims this package puts in a JWT (RFC 7519): Google's service-account assertions and
/// self-signed access tokens.
struct JWTClaims: Encodable, Sendable {
    /// The service account's email.
    var iss: String
    /// The subject: a user to act for (domain-wide delegation), or the account itself.
    var sub: String?
    /// The audience: a token endpoint, or `https://<service host>/`.
    var aud: String?
    /// Space-separated scopes.
    var scope: String?
    /// The audience of the ID token asked for (Google's ID-token grant), instead of scopes.
    var targetAudience: String?
    /// Issued at, in seconds since 1970.
    var iat: Int
    /// Expires at, in seconds since 1970.
    var exp: Int

    private enum CodingKeys: String, CodingKey {
        case iss, sub, aud, scope, iat, exp
        case targetAudience = "target_audience"
    }
}

/// JWS compact serialization with RS256 (RFC 7515, 7518): `base64url(header).base64url(claims).
/// base64url(signature)`, without padding.
enum JSONWebToken {
    private struct Header: Encodable {
        let alg = "RS256"
        /// Absent (not null) without a key id, as google-auth writes it.
        let kid: String?
        let typ = "JWT"
    }

    /// Signs `claims` with `key`, naming it `keyID` in the header when there is one.
    static func rs256(claims: JWTClaims, keyID: String?, key: RSAPrivateKey) throws(CryptoError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let header: Data
        let payload: Data
        do {
            header = try encoder.encode(Header(kid: keyID))
            payload = try encoder.encode(claims)
        } catch {
            throw CryptoError("cannot encode the JWT: \(error)")
        }
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        let signature = try key.signRS256(Array(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature)
    }
}
