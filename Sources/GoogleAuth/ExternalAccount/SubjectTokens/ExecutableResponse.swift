import Foundation
import OAuth2

/// What an executable source prints (or caches in its `output_file`): the versioned JSON
/// response of Google's executable-sourced credentials.
///
/// ```json
/// {"version": 1, "success": true, "token_type": "urn:ietf:params:oauth:token-type:id_token",
///  "id_token": "eyJ...", "expiration_time": 1700000000}
/// {"version": 1, "success": false, "code": "401", "message": "not signed in"}
/// ```
///
/// `token_type` `...:jwt` or `...:id_token` carries the token in `id_token`, `...:saml2` in
/// `saml_response`. `expiration_time` (Unix seconds) is optional; a token past it is refused.
struct ExecutableResponse: Equatable {
    /// The response version this package reads.
    static let supportedVersion = 1
    static let jwtTokenType = "urn:ietf:params:oauth:token-type:jwt"
    static let idTokenType = "urn:ietf:params:oauth:token-type:id_token"
    static let samlTokenType = "urn:ietf:params:oauth:token-type:saml2"

    /// The subject token.
    var token: String
    /// Its type.
    var tokenType: String
    /// When it expires, when the response says.
    var expiresAt: Date?

    /// Why a response is not a token, in words; never quotes the token.
    struct Refusal: Error, Equatable {
        enum Kind: Equatable {
            /// Not the response format (not JSON, a field missing or of the wrong type, another version).
            case malformed
            /// The program said it failed (`success: false`).
            case unsuccessful
            /// The token's `expiration_time` has passed.
            case expired
        }

        var kind: Kind
        var reason: String
    }

    /// The response in `bytes`, checked at `now`.
    static func parse(_ bytes: [UInt8], now: Date) throws(Refusal) -> ExecutableResponse {
        func malformed(_ reason: String) -> Refusal { Refusal(kind: .malformed, reason: reason) }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] else {
            throw malformed("its output is not a JSON object")
        }
        guard let version = integer(object["version"]) else {
            throw malformed("the response has no version (a whole number)")
        }
        guard version == supportedVersion else {
            throw malformed("the response has version \(version); version \(supportedVersion) is supported")
        }
        guard let success = boolean(object["success"]) else {
            throw malformed("the response has no success (true or false)")
        }
        guard success else {
            guard let code = object["code"] as? String, let message = object["message"] as? String else {
                throw malformed("the response says it failed but has no code and message")
            }
            throw Refusal(
                kind: .unsuccessful,
                reason: "it answered success: false, code \(QuotedText.quote(code)): \(QuotedText.quote(message))"
            )
        }
        var expiresAt: Date?
        if let expiration = object["expiration_time"], !(expiration is NSNull) {
            guard let number = expiration as? NSNumber, String(cString: number.objCType) != "c",
                number.doubleValue.isFinite
            else {
                throw malformed("the response's expiration_time is not a number of seconds")
            }
            expiresAt = Date(timeIntervalSince1970: number.doubleValue)
            if let expiresAt, expiresAt <= now {
                throw Refusal(kind: .expired, reason: "the token it returned expired at \(expiresAt)")
            }
        }
        guard let tokenType = object["token_type"] as? String else {
            throw malformed("the response has no token_type")
        }
        let field: String
        switch tokenType {
        case jwtTokenType, idTokenType: field = "id_token"
        case samlTokenType: field = "saml_response"
        default:
            throw malformed(
                "the response's token_type \"\(QuotedText.quote(tokenType.prefix(80)))\" is not \(jwtTokenType), \(idTokenType) or \(samlTokenType)"
            )
        }
        guard let token = object[field] as? String, !token.isEmpty else {
            throw malformed("the response has token_type \(tokenType) but no \(field)")
        }
        return ExecutableResponse(token: token, tokenType: tokenType, expiresAt: expiresAt)
    }

    private static func integer(_ value: Any?) -> Int? {
        guard let number = value as? NSNumber, String(cString: number.objCType) != "c" else { return nil }
        return value as? Int
    }

    private static func boolean(_ value: Any?) -> Bool? {
        guard let number = value as? NSNumber, String(cString: number.objCType) == "c" else { return nil }
        return number.boolValue
    }
}
