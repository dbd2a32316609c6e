/// What tokens, scopes and OAuth error codes from an authorization server may look like, and how
/// long they may be. Everything a server sends is checked against these before the session keeps
/// it, so a stored token always fits in the header or form it is later sent in.
package enum TokenSyntax {
    /// The longest access token taken. gRPC C-core refuses request metadata over 16 KiB (its hard
    /// limit) and common HTTP servers refuse single header lines of 8–16 KiB, so a longer token
    /// could never be used; refusing it at the token endpoint says so where it happened.
    package static let maximumAccessTokenLength = 16 * 1024
    /// The longest refresh token taken (it travels in a form body; no issuer comes near this).
    package static let maximumRefreshTokenLength = 16 * 1024
    /// The longest ID token taken (a JWT read for display; issuers' are a few KiB).
    package static let maximumIDTokenLength = 64 * 1024
    /// The longest scope string taken.
    package static let maximumScopeLength = 16 * 1024
    /// The longest OAuth `error` code taken (the registered ones are under 32 characters).
    package static let maximumErrorCodeLength = 128
    /// How much of a server's `error_description` an error message quotes.
    package static let maximumQuotedDescriptionLength = 200

    /// RFC 6750 section 2.1's `b64token`, the only thing `Authorization: Bearer` may carry:
    /// `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`, at most
    /// ``maximumAccessTokenLength`` bytes.
    package static func isBearerToken(_ token: String) -> Bool {
        let bytes = token.utf8
        guard !bytes.isEmpty, bytes.count <= maximumAccessTokenLength else { return false }
        var padding = false
        var sawCharacter = false
        for byte in bytes {
            if byte == UInt8(ascii: "=") {
                padding = true
            } else if !padding && isB64TokenCharacter(byte) {
                sawCharacter = true
            } else {
                return false
            }
        }
        return sawCharacter
    }

    /// RFC 6749 appendix A.17: `refresh-token = 1*VSCHAR` (printable ASCII and space), at most
    /// ``maximumRefreshTokenLength`` bytes.
    package static func isRefreshToken(_ token: String) -> Bool {
        let bytes = token.utf8
        return !bytes.isEmpty && bytes.count <= maximumRefreshTokenLength
            && bytes.allSatisfy { (0x20...0x7E).contains($0) }
    }

    /// A JWS/JWE compact serialization: base64url parts separated by dots, at most
    /// ``maximumIDTokenLength`` bytes.
    package static func isCompactJWT(_ token: String) -> Bool {
        let bytes = token.utf8
        guard bytes.count <= maximumIDTokenLength, bytes.contains(UInt8(ascii: ".")) else { return false }
        return bytes.allSatisfy { byte in
            byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: "=") || isAlphanumeric(byte)
        }
    }

    /// The scope tokens of an RFC 6749 section 3.3 scope (`scope-token *( SP scope-token )`,
    /// each `1*NQCHAR`), or `nil` when it is not one. Repeated spaces are tolerated; an empty
    /// scope is no scopes.
    package static func scopeTokens(_ scope: String) -> [String]? {
        guard scope.utf8.count <= maximumScopeLength else { return nil }
        let tokens = scope.utf8.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: true)
        guard tokens.allSatisfy({ $0.allSatisfy(isNQChar) }) else { return nil }
        return tokens.map { String(decoding: $0, as: UTF8.self) }
    }

    /// RFC 6749 appendix A.7: `error = 1*NQSCHAR`, at most ``maximumErrorCodeLength`` bytes.
    package static func isErrorCode(_ code: String) -> Bool {
        let bytes = code.utf8
        return !bytes.isEmpty && bytes.count <= maximumErrorCodeLength
            && bytes.allSatisfy { $0 == 0x20 || isNQChar($0) }
    }

    /// `text` cut to `limit` characters (with an ellipsis), so an error message quotes a server's
    /// text only as far as it helps.
    package static func bounded(_ text: String, to limit: Int = maximumQuotedDescriptionLength) -> String {
        text.count <= limit ? text : String(text.prefix(limit)) + "…"
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default: return false
        }
    }

    private static func isB64TokenCharacter(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: "~") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/")
    }

    /// `NQCHAR = %x21 / %x23-5B / %x5D-7E`: printable ASCII but the double quote and the backslash.
    private static func isNQChar(_ byte: UInt8) -> Bool {
        (0x21...0x7E).contains(byte) && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
    }
}
