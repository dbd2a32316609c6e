internal import COpenSSL

/// Random bytes for secrets (PKCE verifiers, OAuth `state`), from OpenSSL's CSPRNG, which the
/// operating system's entropy source seeds.
package enum SecureRandom {
    /// `count` random bytes.
    ///
    /// - Throws: ``CryptoError`` when OpenSSL's generator cannot be seeded or `count` is negative.
    package static func bytes(_ count: Int) throws(CryptoError) -> [UInt8] {
        OpenSSLLibrary.initialise()
        guard count >= 0, count <= Int(Int32.max) else {
            throw CryptoError("cannot make \(count) random bytes")
        }
        var bytes = [UInt8](repeating: 0, count: count)
        guard count == 0 || RAND_bytes(&bytes, Int32(count)) == 1 else {
            throw .openSSL("the random number generator failed")
        }
        return bytes
    }
}
