import AuthCrypto

/// Proof Key for Code Exchange (RFC 7636) with the S256 method, plus the random `state`.
struct PKCE: Sendable {
    /// 64 characters of `[A-Za-z0-9-_]` (48 random bytes, base64url): within RFC 7636's 43–128.
    let verifier: String
    /// `BASE64URL(SHA256(verifier))`.
    let challenge: String
    /// Always `S256`.
    let method = "S256"

    /// A fresh verifier and its challenge.
    ///
    /// - Throws: ``OAuthError/Kind/flowFailed`` when OpenSSL cannot make random bytes or hash.
    init() throws(OAuthError) {
        try self.init(verifier: Self.randomToken(byteCount: 48))
    }

    init(verifier: String) throws(OAuthError) {
        self.verifier = verifier
        do {
            challenge = Self.base64URL(try SHA256.hash(Array(verifier.utf8)))
        } catch {
            throw OAuthError(.flowFailed, "could not compute the PKCE code challenge: \(error)")
        }
    }

    /// `byteCount` bytes from OpenSSL's CSPRNG, base64url without padding.
    static func randomToken(byteCount: Int) throws(OAuthError) -> String {
        do {
            return base64URL(try SecureRandom.bytes(byteCount))
        } catch {
            throw OAuthError(.flowFailed, "could not make a random value for the sign-in: \(error)")
        }
    }

    /// Base64url (RFC 4648 section 5) without padding.
    static func base64URL(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            var chunk = UInt32(bytes[index]) << 16
            if count > 1 { chunk |= UInt32(bytes[index + 1]) << 8 }
            if count > 2 { chunk |= UInt32(bytes[index + 2]) }
            for position in 0...count {
                output.append(alphabet[Int(chunk >> UInt32(18 - position * 6) & 63)])
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }
}
