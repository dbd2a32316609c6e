import AuthRPCSyntax
import Foundation

/// The claims of a compact JWT (RFC 7519), read without verifying its signature: the one reader
/// of OAuth2's ID-token claims and GoogleAuth's ID-token expiry, whose tokens came straight from
/// an endpoint over a connection this package checked.
package enum JWTPayload {
    /// The payload (the second dot-separated part, base64url JSON) as a JSON object; `nil` when
    /// it is not one, or when `token` does not have three parts (`signed`) or at least two.
    package static func claims(of token: String, signed: Bool) -> [String: Any]? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard signed ? parts.count == 3 : parts.count >= 2, let payload = Base64URL.decode(parts[1]) else {
            return nil
        }
        return (try? JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any]
    }
}
