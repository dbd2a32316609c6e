import Foundation

/// A successful token endpoint answer (RFC 6749 section 5.1).
struct TokenResponse: Sendable {
    var accessToken: String
    var tokenType: String?
    /// Seconds the access token lives, when the server said.
    var expiresIn: TimeInterval?
    var refreshToken: String?
    var idToken: String?
    var scope: String?

    /// Parses a 200 answer. `nil` when it is not JSON or has no `access_token`.
    init?(json data: Data) {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let accessToken = object["access_token"] as? String, !accessToken.isEmpty else { return nil }
        self.accessToken = accessToken
        tokenType = object["token_type"] as? String
        expiresIn = jsonNumber(object["expires_in"])
        refreshToken = (object["refresh_token"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        idToken = (object["id_token"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        scope = object["scope"] as? String
    }
}

/// An OAuth error answer (RFC 6749 section 5.2): `{"error": "...", "error_description": "..."}`.
struct OAuthErrorResponse: Sendable {
    var code: String
    var description: String?

    init?(json data: Data) {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let code = object["error"] as? String, !code.isEmpty else { return nil }
        self.code = code
        description = object["error_description"] as? String
    }

    /// `code: description`, or the code alone.
    var summary: String { description.map { "\(code): \($0)" } ?? code }
}

/// A JSON number, or a number sent as a string (some servers send `expires_in` and `interval`
/// that way); `nil` otherwise.
func jsonNumber(_ value: Any?) -> Double? {
    if let number = value as? Double { return number }
    if let text = value as? String { return Double(text) }
    return nil
}
