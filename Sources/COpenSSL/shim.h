// OpenSSL 3 as Swift sees it, plus functions for the macros Swift cannot import.
#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H

#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/decoder.h>
#include <openssl/param_build.h>

static inline int copenssl_ctx_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}

static inline int copenssl_set_tlsext_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

static inline long copenssl_ctx_set_options(SSL_CTX *ctx, long options) {
    return (long)SSL_CTX_set_options(ctx, (uint64_t)options);
}

static inline int copenssl_ctx_add1_chain_cert(SSL_CTX *ctx, X509 *certificate) {
    return (int)SSL_CTX_add1_chain_cert(ctx, certificate);
}

/// Read ahead: OpenSSL asks its BIO for as much as its record buffer holds, not for a record's
/// header and then its fragment.
static inline void copenssl_ctx_set_read_ahead(SSL_CTX *ctx) { SSL_CTX_set_read_ahead(ctx, 1); }

static inline long copenssl_op_no_compression(void) { return (long)SSL_OP_NO_COMPRESSION; }
static inline long copenssl_op_no_renegotiation(void) { return (long)SSL_OP_NO_RENEGOTIATION; }

/// The key selection for a public key (with its domain parameters), for decoders and
/// EVP_PKEY_fromdata.
static inline int copenssl_selection_public_key(void) { return EVP_PKEY_PUBLIC_KEY; }

/// The RSA parameter names as static C strings: OSSL_PARAM_BLD keeps a name's pointer until
/// OSSL_PARAM_BLD_to_param, longer than a C string Swift makes for one call lives.
static inline const char *copenssl_param_rsa_n(void) { return OSSL_PKEY_PARAM_RSA_N; }
static inline const char *copenssl_param_rsa_e(void) { return OSSL_PKEY_PARAM_RSA_E; }

/// A BIO that has nothing to read now, or took what it was given: the retry flags OpenSSL
/// reads to report SSL_ERROR_WANT_READ rather than an end of file.
static inline void copenssl_bio_set_retry_read(BIO *bio) { BIO_set_retry_read(bio); }
static inline void copenssl_bio_clear_retry_flags(BIO *bio) { BIO_clear_retry_flags(bio); }

#endif
