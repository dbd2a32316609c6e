internal import COpenSSL

/// SHA-256 (FIPS 180-4), computed by OpenSSL.
package enum SHA256 {
    /// The 32-byte digest of `message`.
    ///
    /// - Throws: ``CryptoError`` when OpenSSL cannot compute it (no provider offers SHA-256, or
    ///   memory ran out).
    package static func hash(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        OpenSSLLibrary.initialise()
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard EVP_Digest(message, message.count, &digest, &length, EVP_sha256(), nil) == 1, length == 32 else {
            throw .openSSL("SHA-256 failed")
        }
        return Array(digest.prefix(32))
    }
}
