internal import COpenSSL

extension RSAPrivateKey {
    /// The public half of the key, to verify what it signs: a key of its own holding only the
    /// modulus and the public exponent.
    ///
    /// - Throws: ``CryptoError`` when OpenSSL cannot read the numbers or build the key.
    package var publicKey: RSAPublicKey {
        get throws(CryptoError) {
            ERR_clear_error()
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
                throw .openSSL("could not read the RSA key's public numbers")
            }
            return try RSAPublicKey(adopting: try RSAPublicKey.fromNumbers(n: n, e: e))
        }
    }
}
