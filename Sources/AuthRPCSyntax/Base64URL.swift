/// Base64url (RFC 4648 section 5), as JOSE writes binary values (RFC 7515 section 2): the URL-safe
/// alphabet, padding left out. JWTs, JWK numbers and PKCE values are written in it.
package enum Base64URL {
    /// `bytes` in base64url, without padding.
    package static func encode<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        Base64Codec.url.encode(bytes, padded: false)
    }

    /// The bytes `text` encodes; `nil` for a character outside the alphabet, whitespace, a length
    /// no encoding has, or padding that does not complete the last quantum. Padding is accepted,
    /// as other JOSE readers do, though RFC 7515 leaves it out.
    package static func decode<S: StringProtocol>(_ text: S) -> [UInt8]? {
        Base64Codec.url.decode(text)
    }
}
