internal import COpenSSL

/// HMAC-SHA256 (RFC 2104 over FIPS 180-4), computed by OpenSSL: what AWS Signature Version 4
/// derives its signing key and signature with.
package enum HMAC {
    /// The 32-byte HMAC-SHA256 of `message` under `key` (any length; a key longer than the
    /// 64-byte block is hashed first, as RFC 2104 says).
    ///
    /// - Throws: ``CryptoError`` when OpenSSL cannot compute it (no provider offers HMAC or
    ///   SHA-256, or memory ran out).
    package static func sha256(key: [UInt8], message: [UInt8]) throws(CryptoError) -> [UInt8] {
        OpenSSLLibrary.initialise()
        guard key.count <= Int(Int32.max) else { throw CryptoError("an HMAC key of \(key.count) bytes is too long") }
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        // An empty array may have no storage; OpenSSL reads no bytes for a zero length but wants
        // a pointer all the same.
        let keyBytes = key.isEmpty ? [0] : key
        let messageBytes = message.isEmpty ? [0] : message
        let result = COpenSSL.HMAC(
            EVP_sha256(),
            keyBytes,
            Int32(key.count),
            messageBytes,
            message.count,
            &digest,
            &length
        )
        guard result != nil, length == 32 else { throw .openSSL("HMAC-SHA256 failed") }
        return Array(digest.prefix(32))
    }
}
