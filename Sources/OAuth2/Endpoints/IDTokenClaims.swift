import Foundation

/// The claims of an OpenID Connect ID token, read for display only.
///
/// The token's signature is not verified: the token came straight from the token endpoint over
/// the connection the session trusts, and nothing here grants access on the strength of it.
package struct IDTokenClaims: Sendable {
    /// `sub`.
    package var subject: String?
    /// `email`.
    package var email: String?
    /// `email_verified`, a JSON bool or a string (`"true"`).
    package var emailVerified: Bool?

    /// Reads the payload (the second dot-separated part, base64url JSON); `nil` when it is not
    /// one, or when the token is longer than ``TokenSyntax/maximumIDTokenLength``.
    package init?(jwt: String) {
        guard jwt.utf8.count <= TokenSyntax.maximumIDTokenLength else { return nil }
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 2, let payload = Self.base64URLDecode(parts[1]),
            let object = try? JSONSerialization.jsonObject(with: payload) as? [String: Any]
        else { return nil }
        subject = object["sub"] as? String
        email = object["email"] as? String
        // email_verified is a JSON bool for most issuers, a string ("true") for some.
        switch object["email_verified"] {
        case let flag as Bool: emailVerified = flag
        case let text as String: emailVerified = text.lowercased() == "true"
        case let number as NSNumber: emailVerified = number.boolValue
        default: emailVerified = nil
        }
    }

    private static func base64URLDecode(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        let remainder = base64.count % 4
        if remainder == 1 { return nil }
        if remainder > 0 { base64 += String(repeating: "=", count: 4 - remainder) }
        return Data(base64Encoded: base64)
    }
}

extension AuthState {
    /// The user's subject identifier (`sub`) from the ID token, for display.
    public var userID: String? { idToken.flatMap(IDTokenClaims.init(jwt:))?.subject }
    /// The user's email address from the ID token, for display.
    public var userEmail: String? { idToken.flatMap(IDTokenClaims.init(jwt:))?.email }
    /// Whether the issuer verified the email address (`email_verified`).
    public var userEmailIsVerified: Bool? { idToken.flatMap(IDTokenClaims.init(jwt:))?.emailVerified }
}
