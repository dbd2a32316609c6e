import AuthCrypto
import AuthRPCSyntax

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
            challenge = Base64URL.encode(try SHA256.hash(Array(verifier.utf8)))
        } catch {
            throw OAuthError(.flowFailed, "could not compute the PKCE code challenge: \(error)")
        }
    }

    /// `byteCount` bytes from OpenSSL's CSPRNG, base64url without padding.
    static func randomToken(byteCount: Int) throws(OAuthError) -> String {
        do {
            return Base64URL.encode(try SecureRandom.bytes(byteCount))
        } catch {
            throw OAuthError(.flowFailed, "could not make a random value for the sign-in: \(error)")
        }
    }
}
