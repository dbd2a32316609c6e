package import Foundation

/// A successful token endpoint answer (RFC 6749 section 5.1), checked field by field.
///
/// What is accepted:
/// - `access_token`: an RFC 6750 `b64token` of at most 16 KiB (``TokenSyntax/isBearerToken(_:)``),
///   the only thing a Bearer header may carry.
/// - `token_type`: `Bearer` in any case (RFC 6749 section 5.1 says the type is case-insensitive).
///   An absent `token_type` is taken as Bearer: some servers leave it out, and Bearer is the only
///   type this library can send. Any other type (`mac`, `DPoP`, …) is refused, since sending such a
///   token as a Bearer token would be wrong (RFC 6749 section 7.1).
/// - `expires_in`: a number (or a decimal string) of at least ``minimumLifetime``; larger than
///   ``maximumLifetime`` it is clamped to it. Absent means the lifetime is unknown.
/// - `refresh_token`: 1*VSCHAR, at most 16 KiB; `id_token`: a compact JWT of at most 64 KiB;
///   `scope`: RFC 6749 scope tokens.
package struct TokenResponse: Sendable {
    /// The access token.
    package var accessToken: String
    /// The token type as the server wrote it (`Bearer` in some case), or `nil` when it sent none.
    package var tokenType: String?
    /// Seconds the access token lives, when the server said (within the bounds above).
    package var expiresIn: TimeInterval?
    /// A new refresh token (rotation), when the server sent one.
    package var refreshToken: String?
    /// The OpenID Connect ID token.
    package var idToken: String?
    /// The granted scopes, when the server said.
    package var scopes: [String]?

    /// The shortest lifetime taken. A token that expires within a second of being issued would
    /// make every call a refresh; such an answer is refused rather than obeyed.
    package static let minimumLifetime: TimeInterval = 1
    /// The longest lifetime kept. Larger values (1e300, 10^30, an overflowing decimal) are
    /// clamped to a year: such a token is still refreshed one day, and the expiry date stays one
    /// that the session file can hold.
    package static let maximumLifetime: TimeInterval = 365 * 86_400

    /// Parses and checks a 2xx token endpoint body.
    ///
    /// - Throws: ``InvalidTokenResponse`` naming the first field that is wrong (never its value),
    ///   and carrying the answer's refresh token when that one is well formed.
    package init(json data: Data) throws(InvalidTokenResponse) {
        guard let fields = JSONFields(parsing: data) else {
            throw InvalidTokenResponse(reason: "the body is not a JSON object", rotatedRefreshToken: nil)
        }
        // The refresh token first: if the server rotated it, keep the new one even when the rest
        // of the answer is unusable (see InvalidTokenResponse).
        var refreshToken: String?
        do throws(JSONFields.Mismatch) {
            refreshToken = try fields.string("refresh_token").flatMap { $0.isEmpty ? nil : $0 }
        } catch {
            throw InvalidTokenResponse(reason: "refresh_token is not a string", rotatedRefreshToken: nil)
        }
        if let token = refreshToken, !TokenSyntax.isRefreshToken(token) {
            throw InvalidTokenResponse(
                reason:
                    "refresh_token has characters other than printable ASCII, or is longer than \(TokenSyntax.maximumRefreshTokenLength) bytes",
                rotatedRefreshToken: nil
            )
        }
        self.refreshToken = refreshToken

        func invalid(_ reason: String) -> InvalidTokenResponse {
            InvalidTokenResponse(reason: reason, rotatedRefreshToken: refreshToken)
        }
        func string(_ key: String) throws(InvalidTokenResponse) -> String? {
            do throws(JSONFields.Mismatch) { return try fields.string(key) } catch {
                throw invalid("\(key) is not a string")
            }
        }

        guard let accessToken = try string("access_token"), !accessToken.isEmpty else {
            throw invalid("it has no access_token")
        }
        guard TokenSyntax.isBearerToken(accessToken) else {
            throw invalid(
                "access_token is not an RFC 6750 bearer token (letters, digits, -._~+/ and trailing =) of at most \(TokenSyntax.maximumAccessTokenLength) bytes"
            )
        }
        self.accessToken = accessToken

        tokenType = try string("token_type")
        if let tokenType, tokenType.lowercased() != "bearer" {
            throw invalid(
                "token_type \"\(TokenSyntax.bounded(tokenType, to: 32))\" is not Bearer, the only type this client can send"
            )
        }

        let lifetime: Double?
        do throws(JSONFields.Mismatch) { lifetime = try fields.number("expires_in") } catch {
            throw invalid("expires_in is not a number")
        }
        if let lifetime {
            guard lifetime >= Self.minimumLifetime else {
                throw invalid(
                    "expires_in is under \(Int(Self.minimumLifetime)) second: the token would be expired on arrival"
                )
            }
            expiresIn = min(lifetime, Self.maximumLifetime)
        } else {
            expiresIn = nil
        }

        idToken = try string("id_token").flatMap { $0.isEmpty ? nil : $0 }
        if let idToken, !TokenSyntax.isCompactJWT(idToken) {
            throw invalid("id_token is not a compact JWT of at most \(TokenSyntax.maximumIDTokenLength) bytes")
        }

        if let scope = try string("scope") {
            guard let tokens = TokenSyntax.scopeTokens(scope) else {
                throw invalid(
                    "scope is not a list of RFC 6749 scope tokens (printable ASCII but \" and \\) of at most \(TokenSyntax.maximumScopeLength) bytes"
                )
            }
            scopes = tokens
        } else {
            scopes = nil
        }
    }
}

/// Why a token endpoint's 2xx answer was refused.
///
/// When the server rotated the refresh token in that answer, the old refresh token may already be
/// spent at the server: dropping the new one along with the rest would sign the user out at the
/// next refresh (or, with reuse detection, revoke the whole grant). So a well-formed refresh token
/// from an otherwise unusable answer travels here, for the session to keep. It never appears in
/// `description` or a mirror.
package struct InvalidTokenResponse: Error, Sendable, CustomStringConvertible, CustomReflectable {
    /// What is wrong, naming the field and never quoting a token.
    package let reason: String
    /// The answer's refresh token, when it was well formed.
    package let rotatedRefreshToken: String?

    package init(reason: String, rotatedRefreshToken: String?) {
        self.reason = reason
        self.rotatedRefreshToken = rotatedRefreshToken
    }

    /// The same reason without the refresh token, to travel in an error.
    var withoutSecrets: InvalidTokenResponse { InvalidTokenResponse(reason: reason, rotatedRefreshToken: nil) }

    package var description: String { reason }
    package var customMirror: Mirror { Mirror(self, children: ["reason": reason]) }
}

/// An OAuth error answer (RFC 6749 section 5.2): `{"error": "...", "error_description": "..."}`.
package struct OAuthErrorResponse: Sendable {
    /// The `error` code (1*NQSCHAR, at most 128 bytes).
    package var code: String
    /// The `error_description`, cut to what an error message quotes.
    package var description: String? { fullDescription.map { TokenSyntax.bounded($0) } }
    /// The `error_description` whole (the body it came in is bounded), for ``summary(hiding:)``.
    private let fullDescription: String?

    /// Parses an error body; `nil` when it is not JSON or has no well-formed `error` code.
    package init?(json data: Data) {
        guard let fields = JSONFields(parsing: data),
            let code = try? fields.string("error"), TokenSyntax.isErrorCode(code)
        else { return nil }
        self.code = code
        fullDescription = (try? fields.string("error_description")).flatMap { $0 }
    }

    /// `code: description`, or the code alone.
    package var summary: String { description.map { "\(code): \($0)" } ?? code }

    /// ``summary``, with every one of `secrets` replaced by `<redacted>` before it is cut to
    /// `limit` characters (so no part of a secret survives at the cut).
    package func summary(hiding secrets: [String], limit: Int) -> String {
        var text = fullDescription.map { "\(code): \($0)" } ?? code
        for secret in secrets where !secret.isEmpty {
            text = text.replacingOccurrences(of: secret, with: "<redacted>")
        }
        return TokenSyntax.bounded(text, to: limit)
    }
}
