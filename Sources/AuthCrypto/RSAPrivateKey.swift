internal import COpenSSL

/// An RSA private key loaded by OpenSSL, for RS256 signatures (RSASSA-PKCS1-v1_5 with SHA-256,
/// RFC 7518 section 3.3): what Google's service-account keys sign JWTs with.
///
/// The key lives only inside OpenSSL's `EVP_PKEY`, which is freed (and its private numbers
/// cleared by OpenSSL) when the last reference goes. Neither the key nor its PEM text appears in
/// ``description`` or in any ``CryptoError``.
package final class RSAPrivateKey: @unchecked Sendable, CustomStringConvertible {
    // Sendable because `key` is set once in `init` and never modified: OpenSSL allows an
    // EVP_PKEY to be used from many threads at once when no thread changes it (openssl-threads(7));
    // each signature gets its own EVP_MD_CTX.
    let key: OpaquePointer

    /// The modulus size in bits.
    package let bitCount: Int

    /// The smallest modulus accepted: RFC 7518 section 3.3 requires 2048 bits for RS256.
    package static let minimumBitCount = 2048

    /// Loads the first private key in `pem`: PKCS#8 (`-----BEGIN PRIVATE KEY-----`, as in
    /// Google's JSON keys) or PKCS#1 (`-----BEGIN RSA PRIVATE KEY-----`).
    ///
    /// - Throws: ``CryptoError`` when there is no such key, when it is encrypted, when it is not
    ///   RSA, or when it is smaller than ``minimumBitCount``. Messages never quote the PEM text.
    package convenience init(pem: String) throws(CryptoError) {
        var text = pem
        let loaded = text.withUTF8 { bytes in
            Result { () throws(CryptoError) in try Self.load(UnsafeRawBufferPointer(bytes)) }
        }
        self.init(loaded: try loaded.get())
    }

    /// Loads the first private key in the PEM text `pem` (bytes the caller owns and may clear
    /// afterwards: OpenSSL reads them in place and keeps no copy of the text).
    ///
    /// - Throws: ``CryptoError`` as ``init(pem:)`` does.
    package convenience init(pemBytes pem: UnsafeRawBufferPointer) throws(CryptoError) {
        self.init(loaded: try Self.load(pem))
    }

    private init(loaded: (key: OpaquePointer, bits: Int)) {
        key = loaded.key
        bitCount = loaded.bits
    }

    private static func load(_ pem: UnsafeRawBufferPointer) throws(CryptoError) -> (key: OpaquePointer, bits: Int) {
        OpenSSLLibrary.initialise()
        if contains(pem, "-----BEGIN ENCRYPTED PRIVATE KEY-----") || contains(pem, "Proc-Type: 4,ENCRYPTED") {
            throw CryptoError("the private key is encrypted; only unencrypted PEM keys are supported")
        }
        ERR_clear_error()
        guard pem.count <= Int(Int32.max), let base = pem.baseAddress, let bio = BIO_new_mem_buf(base, Int32(pem.count))
        else {
            throw .openSSL("no PEM private key (PKCS#8 or PKCS#1) could be read")
        }
        // A password callback that has none: OpenSSL's default would prompt on the terminal.
        let loaded = PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in 0 }, nil)
        BIO_free(bio)
        guard let loaded else {
            throw .openSSL("no PEM private key (PKCS#8 or PKCS#1) could be read")
        }
        guard EVP_PKEY_get_base_id(loaded) == EVP_PKEY_RSA else {
            let type = EVP_PKEY_get0_type_name(loaded).map { String(cString: $0) } ?? "not RSA"
            EVP_PKEY_free(loaded)
            throw CryptoError("the private key is \(type), not RSA")
        }
        let bits = Int(EVP_PKEY_get_bits(loaded))
        guard bits >= minimumBitCount else {
            EVP_PKEY_free(loaded)
            throw CryptoError(
                "the RSA key has \(bits) bits; RS256 needs at least \(minimumBitCount) (RFC 7518 section 3.3: smaller keys can be factored), and Google issues 2048-bit keys"
            )
        }
        return (loaded, bits)
    }

    private static func contains(_ haystack: UnsafeRawBufferPointer, _ needle: String) -> Bool {
        let needle = Array(needle.utf8)
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { start in
            (0..<needle.count).allSatisfy { haystack[start + $0] == needle[$0] }
        }
    }

    deinit {
        EVP_PKEY_free(key)
    }

    /// The RS256 signature of `message`: RSASSA-PKCS1-v1_5 over its SHA-256 digest.
    ///
    /// - Throws: ``CryptoError`` when OpenSSL cannot sign.
    package func signRS256(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else {
            throw .openSSL("could not allocate a signing context")
        }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1 else {
            throw .openSSL("could not start an RS256 signature")
        }
        var length = 0
        guard EVP_DigestSign(context, nil, &length, message, message.count) == 1, length > 0 else {
            throw .openSSL("could not size the RS256 signature")
        }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, message, message.count) == 1 else {
            throw .openSSL("RS256 signing failed")
        }
        return Array(signature.prefix(length))
    }

    /// The key's type and size; never the key.
    package var description: String { "RSAPrivateKey(\(bitCount) bits)" }
}
