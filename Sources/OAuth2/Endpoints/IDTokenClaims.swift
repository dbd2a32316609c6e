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
        guard let object = JWTPayload.claims(of: jwt, signed: false) else { return nil }
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
}

extension AuthState {
    /// The user's subject identifier (`sub`) from the ID token, for display.
    public var userID: String? { idToken.flatMap(IDTokenClaims.init(jwt:))?.subject }
    /// The user's email address from the ID token, for display.
    public var userEmail: String? { idToken.flatMap(IDTokenClaims.init(jwt:))?.email }
    /// Whether the issuer verified the email address (`email_verified`).
    public var userEmailIsVerified: Bool? { idToken.flatMap(IDTokenClaims.init(jwt:))?.emailVerified }
}
