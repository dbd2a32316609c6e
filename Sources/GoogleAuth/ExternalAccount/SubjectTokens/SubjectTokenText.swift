import Foundation
import OAuth2

/// The subject token in what a file or a URL gave: the whole text, or a string field of a JSON
/// object (`format.type` `json`, `subject_token_field_name`).
enum SubjectTokenText {
    /// The largest subject token source read: a JWT is a few KiB, a SAML response some tens.
    static let maximumSize = 256 * 1024

    /// The token in `bytes` read from `place` (for messages).
    ///
    /// Surrounding whitespace is not part of a text token (a file written with `echo` ends with a
    /// newline, which would make a JWT unreadable to the Security Token Service).
    ///
    /// - Throws: ``/OAuth2/OAuthError/Kind/invalidConfiguration`` for text that is not UTF-8, JSON that
    ///   is not an object or lacks the field, or an empty token; the message never quotes the text.
    static func token(
        in bytes: Data,
        format: ExternalAccountCredentialSource.Format,
        from place: String
    ) throws(OAuthError) -> String {
        guard let text = String(data: bytes, encoding: .utf8) else {
            throw OAuthError(.invalidConfiguration, "\(place) is not UTF-8 text")
        }
        let token: String
        switch format {
        case .text:
            token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        case .json(let field):
            guard let object = (try? JSONSerialization.jsonObject(with: bytes)) as? [String: Any] else {
                throw OAuthError(.invalidConfiguration, "\(place) is not a JSON object (the format says json)")
            }
            guard let value = object[field] as? String else {
                throw OAuthError(
                    .invalidConfiguration,
                    "\(place) has no string field \"\(QuotedText.quote(field))\" (subject_token_field_name)"
                )
            }
            token = value
        }
        guard !token.isEmpty else { throw OAuthError(.invalidConfiguration, "\(place) holds an empty subject token") }
        return token
    }
}
