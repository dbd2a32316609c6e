internal import COpenSSL

/// An RSA public key loaded by OpenSSL, for verifying RS256 signatures (RSASSA-PKCS1-v1_5 with
/// SHA-256, RFC 7518 section 3.3): ID tokens and other JWTs signed with an issuer's published keys.
///
/// It reads the forms issuers publish: PEM public keys (SubjectPublicKeyInfo or PKCS#1), X.509
/// certificates in PEM (Google's `oauth2/v1/certs` publishes its signing keys so; only the key is
/// taken, the certificate's dates and signature are not checked), and a JWK's `n` and `e`
/// (RFC 7518 section 6.3.1, as in a JWKS document). Every form gets the same checks: RSA (not
/// RSA-PSS or another type), a modulus of ``minimumBitCount`` to ``maximumBitCount`` bits, odd,
/// and an odd public exponent of at least 3 and at most 64 bits (OpenSSL refuses larger ones
/// for moduli above 3072 bits). Its ``description`` and errors name sizes and types only.
package final class RSAPublicKey: @unchecked Sendable, CustomStringConvertible {
    // Sendable because `key` is set once in `init` and never modified: OpenSSL allows an
    // EVP_PKEY to be used from many threads at once when no thread changes it (openssl-threads(7));
    // each verification gets its own EVP_MD_CTX.
    private let key: OpaquePointer

    /// The modulus size in bits.
    package let bitCount: Int

    /// The smallest modulus accepted, as for private keys: RFC 7518 section 3.3 requires 2048
    /// bits for RS256.
    package static let minimumBitCount = RSAPrivateKey.minimumBitCount

    /// The largest modulus accepted: OpenSSL's own limit (`OPENSSL_RSA_MAX_MODULUS_BITS`), which
    /// also bounds the work a published key can ask of each verification.
    package static let maximumBitCount = 16_384

    /// Loads the public key of the first PEM block in `pem`: `PUBLIC KEY` (SubjectPublicKeyInfo),
    /// `RSA PUBLIC KEY` (PKCS#1) or `CERTIFICATE` (X.509).
    ///
    /// - Throws: ``CryptoError`` when the first block is none of those (a private key, say) or
    ///   does not decode, or when its key fails the checks above. Messages never quote the PEM.
    package convenience init(pem: String) throws(CryptoError) {
        let block = try PEMBlock.first(in: pem)
        ERR_clear_error()
        let loaded: OpaquePointer?
        switch block.label {
        case "PUBLIC KEY", "RSA PUBLIC KEY":
            loaded = Self.decodePublicKey(block.text)
        case "CERTIFICATE":
            loaded = Self.certificateKey(block.text)
        case let label where label.hasSuffix("PRIVATE KEY"):
            throw CryptoError(
                "the PEM holds a private key, not a public key (PUBLIC KEY, RSA PUBLIC KEY or CERTIFICATE)"
            )
        default:
            throw CryptoError(
                "the PEM's first block (\(block.printableLabel)) is not a public key (PUBLIC KEY, RSA PUBLIC KEY or "
                    + "CERTIFICATE)"
            )
        }
        guard let loaded else {
            throw .openSSL("the PEM \(block.printableLabel) block could not be read")
        }
        try self.init(adopting: loaded)
    }

    /// Builds the key from a JWK's `n` and `e` members: base64url, big-endian unsigned integers
    /// (RFC 7518 section 6.3.1), such as one entry of a JWKS document's `keys`.
    ///
    /// - Throws: ``CryptoError`` when either is not base64url or the key fails the checks above.
    package convenience init(jwkModulus: String, exponent: String) throws(CryptoError) {
        // A base64url modulus of maximumBitCount bits has under 2,800 characters.
        guard jwkModulus.utf8.count <= 4 * (Self.maximumBitCount / 8 + 3) / 3,
            let modulus = Base64URL.decode(jwkModulus)
        else {
            throw CryptoError("the JWK's n is not a base64url modulus of at most \(Self.maximumBitCount) bits")
        }
        guard exponent.utf8.count <= 16, let exponentBytes = Base64URL.decode(exponent) else {
            throw CryptoError("the JWK's e is not a base64url public exponent of at most 64 bits")
        }
        try self.init(modulus: modulus, exponent: exponentBytes)
    }

    /// Builds the key from its modulus and public exponent, big-endian unsigned integers (leading
    /// zero bytes allowed).
    ///
    /// - Throws: ``CryptoError`` when the key fails the checks above.
    package convenience init(modulus: [UInt8], exponent: [UInt8]) throws(CryptoError) {
        guard modulus.count <= Self.maximumBitCount / 8 + 1, exponent.count <= 9 else {
            throw CryptoError("the RSA key's numbers are larger than any accepted key's")
        }
        ERR_clear_error()
        guard let n = BN_bin2bn(modulus, Int32(modulus.count), nil) else {
            throw .openSSL("could not read the RSA modulus")
        }
        defer { BN_free(n) }
        guard let e = BN_bin2bn(exponent, Int32(exponent.count), nil) else {
            throw .openSSL("could not read the RSA public exponent")
        }
        defer { BN_free(e) }
        try self.init(adopting: try Self.fromNumbers(n: n, e: e))
    }

    /// Takes ownership of `key` (freeing it if it fails the checks).
    init(adopting key: OpaquePointer) throws(CryptoError) {
        do throws(CryptoError) {
            bitCount = try Self.check(key)
        } catch {
            EVP_PKEY_free(key)
            throw error
        }
        self.key = key
    }

    deinit {
        EVP_PKEY_free(key)
    }

    /// Whether `signature` is an RS256 signature of `message` by this key's private key:
    /// RSASSA-PKCS1-v1_5 over the SHA-256 digest, the signature exactly as long as the modulus
    /// (RFC 8017 section 8.2.2), its encoded digest compared whole (not parsed, so no
    /// Bleichenbacher-style forgery of a low-exponent key gets through).
    package func verifyRS256(signature: [UInt8], message: [UInt8]) -> Bool {
        guard signature.count == (bitCount + 7) / 8, let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        let verified =
            EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1
            && EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
        // A refused signature leaves OpenSSL's reasons on this thread's queue; they must not be
        // mistaken for a later failure's.
        if !verified { ERR_clear_error() }
        return verified
    }

    /// The key's type and size; never the key.
    package var description: String { "RSAPublicKey(\(bitCount) bits)" }

    // MARK: - Loading

    /// A public key from `n` and `e` (OpenSSL 3's EVP_PKEY_fromdata); the caller owns it.
    static func fromNumbers(n: OpaquePointer, e: OpaquePointer) throws(CryptoError) -> OpaquePointer {
        guard let builder = OSSL_PARAM_BLD_new() else { throw .openSSL("could not allocate RSA key parameters") }
        defer { OSSL_PARAM_BLD_free(builder) }
        guard OSSL_PARAM_BLD_push_BN(builder, copenssl_param_rsa_n(), n) == 1,
            OSSL_PARAM_BLD_push_BN(builder, copenssl_param_rsa_e(), e) == 1,
            let parameters = OSSL_PARAM_BLD_to_param(builder)
        else {
            throw .openSSL("could not build RSA key parameters")
        }
        defer { OSSL_PARAM_free(parameters) }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else {
            throw .openSSL("could not allocate an RSA key context")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_fromdata_init(context) == 1,
            EVP_PKEY_fromdata(context, &key, copenssl_selection_public_key(), parameters) == 1,
            let key
        else {
            throw .openSSL("could not build an RSA public key from its numbers")
        }
        return key
    }

    /// The key in a `PUBLIC KEY` or `RSA PUBLIC KEY` PEM block (OpenSSL's decoders), or `nil`.
    private static func decodePublicKey(_ block: String) -> OpaquePointer? {
        var key: OpaquePointer?
        guard
            let decoder = OSSL_DECODER_CTX_new_for_pkey(
                &key,
                "PEM",
                nil,
                nil,
                copenssl_selection_public_key(),
                nil,
                nil
            )
        else {
            return nil
        }
        defer { OSSL_DECODER_CTX_free(decoder) }
        // A password callback that has none: a block claiming to be encrypted must not make
        // OpenSSL prompt on the terminal.
        guard OSSL_DECODER_CTX_set_pem_password_cb(decoder, { _, _, _, _ in 0 }, nil) == 1 else { return nil }
        var text = block
        let decoded = text.withUTF8 { bytes -> Bool in
            var data = bytes.baseAddress
            var length = bytes.count
            return OSSL_DECODER_from_data(decoder, &data, &length) == 1
        }
        guard decoded else {
            if let key { EVP_PKEY_free(key) }
            return nil
        }
        return key
    }

    /// The key of the certificate in a `CERTIFICATE` PEM block, or `nil`.
    private static func certificateKey(_ block: String) -> OpaquePointer? {
        var text = block
        return text.withUTF8 { bytes -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(bytes.count)) else { return nil }
            defer { BIO_free(bio) }
            guard let certificate = PEM_read_bio_X509(bio, nil, { _, _, _, _ in 0 }, nil) else { return nil }
            defer { X509_free(certificate) }
            return X509_get_pubkey(certificate)
        }
    }

    /// The checks every key gets; its size in bits.
    private static func check(_ key: OpaquePointer) throws(CryptoError) -> Int {
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA else {
            let type = EVP_PKEY_get0_type_name(key).map { String(cString: $0) } ?? "not RSA"
            throw CryptoError("the public key is \(type), not RSA")
        }
        let bits = Int(EVP_PKEY_get_bits(key))
        guard bits >= minimumBitCount else {
            throw CryptoError("the RSA key has \(bits) bits; RS256 needs at least \(minimumBitCount)")
        }
        guard bits <= maximumBitCount else {
            throw CryptoError("the RSA key has \(bits) bits; at most \(maximumBitCount) are accepted")
        }
        var n: OpaquePointer?
        var e: OpaquePointer?
        defer {
            BN_free(n)
            BN_free(e)
        }
        guard EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_RSA_N, &n) == 1,
            EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_RSA_E, &e) == 1,
            let n, let e
        else {
            throw .openSSL("could not read the RSA key's numbers")
        }
        guard BN_is_odd(n) == 1 else { throw CryptoError("the RSA modulus is even, so not a product of two primes") }
        let exponentBits = BN_num_bits(e)
        guard BN_is_odd(e) == 1, exponentBits >= 2, exponentBits <= 64 else {
            throw CryptoError("the RSA public exponent is not odd, at least 3 and at most 64 bits")
        }
        return bits
    }
}

/// The first PEM block of a text: its label and its lines from `-----BEGIN` to `-----END`.
private struct PEMBlock {
    var label: String
    var text: String

    /// The label for a message: RFC 7468 labels are capitals, digits, spaces and hyphens.
    var printableLabel: String {
        let allowed = label.utf8.allSatisfy {
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                || $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "-")
        }
        return allowed ? label : "?"
    }

    static func first(in pem: String) throws(CryptoError) -> PEMBlock {
        guard let begin = pem.firstRange(of: "-----BEGIN "),
            let labelEnd = pem[begin.upperBound...].firstRange(of: "-----")
        else {
            throw CryptoError("no PEM block (-----BEGIN …-----) found")
        }
        let label = String(pem[begin.upperBound..<labelEnd.lowerBound])
        guard label.utf8.count <= 64, let end = pem[labelEnd.upperBound...].firstRange(of: "-----END \(label)-----")
        else {
            throw CryptoError("the PEM block has no matching END line")
        }
        return PEMBlock(label: label, text: String(pem[begin.lowerBound..<end.upperBound]) + "\n")
    }
}
