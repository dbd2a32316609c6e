import AuthCrypto
internal import COpenSSL

/// What a TLS client trusts and presents.
package struct TLSClientConfiguration: Sendable {
    /// The lowest protocol version accepted.
    package enum MinimumVersion: Sendable {
        case tls12
        case tls13
    }

    /// Trust the system's root certificates (OpenSSL's default verify paths).
    package var trustsSystemRoots = true
    /// Extra trusted roots, each a PEM text holding one or more certificates.
    package var additionalTrustRootsPEM: [String] = []
    /// A client certificate chain (PEM, leaf first) for mutual TLS.
    package var certificateChainPEM: String?
    /// The client certificate's private key (PEM).
    package var privateKeyPEM: String?
    /// The lowest protocol version accepted (TLS 1.2 by default).
    package var minimumVersion: MinimumVersion = .tls12

    /// What runs over TLS, offered with ALPN (RFC 7301).
    package enum ApplicationProtocol: Sendable {
        /// `h2` is offered, and the server must select it.
        case http2
        /// `http/1.1` is offered; a server that selects nothing speaks it too.
        case http1
    }

    /// What runs over TLS: HTTP/2 by default.
    package var applicationProtocol: ApplicationProtocol = .http2

    package init() {}
}

/// A configured OpenSSL `SSL_CTX`, shared by every connection of a channel.
///
/// Loading the system roots is expensive, so a context is built once and reused.
package final class TLSContext: @unchecked Sendable {
    // Sendable because `context` is fully configured in `init` and never changed afterwards:
    // OpenSSL allows SSL_new from any thread on such a context (it locks its own reference counts).
    let context: OpaquePointer
    /// What the sessions made from this context offer with ALPN and accept.
    let applicationProtocol: TLSClientConfiguration.ApplicationProtocol

    /// Builds a context that verifies the server (never optional), requires TLS 1.2 or later and
    /// offers ALPN `h2` only (or `http/1.1` only, for an HTTP/1.1 context).
    ///
    /// The system's roots are OpenSSL's default verify paths, which the `SSL_CERT_FILE` and
    /// `SSL_CERT_DIR` environment variables replace, as for every OpenSSL-based tool.
    package init(_ configuration: TLSClientConfiguration) throws(TransportFailure) {
        OpenSSLLibrary.initialise()
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw .tls(TLSFailure(.invalidConfiguration, OpenSSLErrors.drain()))
        }
        self.context = context
        self.applicationProtocol = configuration.applicationProtocol
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        let minimum = configuration.minimumVersion == .tls13 ? TLS1_3_VERSION : TLS1_2_VERSION
        _ = copenssl_ctx_set_min_proto_version(context, minimum)
        // OpenSSL keeps its record buffers (about 33 KiB) for the connection's life. With
        // SSL_MODE_RELEASE_BUFFERS it freed them whenever they emptied, so every call at 1 in
        // flight malloc'd them again: 3 mallocs and 50 KB per call, to save 33 KiB on a
        // connection whose own buffers are 448 KiB.
        _ = copenssl_ctx_set_options(context, copenssl_op_no_compression() | copenssl_op_no_renegotiation())
        // One read a record rather than two (its header, then its fragment); the session's BIO
        // hands over a record at a time (`TLSRecordBoundary` says why).
        copenssl_ctx_set_read_ahead(context)
        let name = configuration.applicationProtocol == .http2 ? "h2" : "http/1.1"
        let alpn = [UInt8(name.utf8.count)] + Array(name.utf8)
        guard SSL_CTX_set_alpn_protos(context, alpn, UInt32(alpn.count)) == 0 else {
            throw .tls(TLSFailure(.invalidConfiguration, "could not set ALPN: \(OpenSSLErrors.drain())"))
        }
        if configuration.trustsSystemRoots {
            _ = SSL_CTX_set_default_verify_paths(context)
        }
        for pem in configuration.additionalTrustRootsPEM {
            let certificates = try PEM.certificates(pem)
            defer { for certificate in certificates { X509_free(certificate) } }
            let store = SSL_CTX_get_cert_store(context)
            for certificate in certificates {
                // A duplicate of a root already present is not an error worth failing on.
                _ = X509_STORE_add_cert(store, certificate)
            }
            ERR_clear_error()
        }
        switch (configuration.certificateChainPEM, configuration.privateKeyPEM) {
        case (nil, nil):
            break
        case (let chain?, let key?):
            try useClientIdentity(chainPEM: chain, keyPEM: key)
        default:
            throw .tls(
                TLSFailure(
                    .invalidConfiguration,
                    "a client certificate needs both the certificate chain and its private key"
                )
            )
        }
    }

    deinit {
        SSL_CTX_free(context)
    }

    private func useClientIdentity(chainPEM: String, keyPEM: String) throws(TransportFailure) {
        let chain = try PEM.certificates(chainPEM)
        defer { for certificate in chain { X509_free(certificate) } }
        guard SSL_CTX_use_certificate(context, chain[0]) == 1 else {
            throw .tls(TLSFailure(.invalidConfiguration, "client certificate rejected: \(OpenSSLErrors.drain())"))
        }
        for intermediate in chain.dropFirst() where copenssl_ctx_add1_chain_cert(context, intermediate) != 1 {
            throw .tls(TLSFailure(.invalidConfiguration, "client chain certificate rejected: \(OpenSSLErrors.drain())"))
        }
        let key = try PEM.privateKey(keyPEM)
        defer { EVP_PKEY_free(key) }
        guard SSL_CTX_use_PrivateKey(context, key) == 1, SSL_CTX_check_private_key(context) == 1 else {
            throw .tls(
                TLSFailure(
                    .invalidConfiguration,
                    "private key does not match the client certificate: \(OpenSSLErrors.drain())"
                )
            )
        }
    }
}

/// Reading PEM text with OpenSSL.
enum PEM {
    /// Every certificate in `text`; fails when there is none.
    static func certificates(_ text: String) throws(TransportFailure) -> [OpaquePointer] {
        var certificates: [OpaquePointer] = []
        withMemoryBIO(text) { bio in
            while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
                certificates.append(certificate)
            }
        }
        // The last read always fails with "no start line"; that is how the end is found.
        ERR_clear_error()
        guard !certificates.isEmpty else {
            throw .tls(TLSFailure(.invalidConfiguration, "no PEM certificate found"))
        }
        return certificates
    }

    /// The private key in `text`, which must not be encrypted.
    static func privateKey(_ text: String) throws(TransportFailure) -> OpaquePointer {
        if text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") || text.contains("Proc-Type: 4,ENCRYPTED") {
            throw .tls(
                TLSFailure(
                    .invalidConfiguration,
                    "the client private key is encrypted; only unencrypted PEM keys are supported"
                )
            )
        }
        // A password callback that has none: OpenSSL's default would prompt on the terminal, or
        // read standard input when there is no terminal.
        let key = withMemoryBIO(text) { PEM_read_bio_PrivateKey($0, nil, { _, _, _, _ in 0 }, nil) }
        guard let key else {
            throw .tls(TLSFailure(.invalidConfiguration, "no PEM private key found: \(OpenSSLErrors.drain())"))
        }
        return key
    }

    private static func withMemoryBIO<R>(_ text: String, _ body: (OpaquePointer) -> R) -> R {
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBytes { raw in
            let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count))!
            defer { BIO_free(bio) }
            return body(bio)
        }
    }
}
