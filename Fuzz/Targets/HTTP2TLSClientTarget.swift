import AuthCrypto
import COpenSSL
import Foundation
import Synchronization

@testable import AuthRPCTransport

#if canImport(Glibc)
import Glibc
#endif

/// The HTTP/2 client over TLS after the handshake: what `h2-client` drives, with every byte of the
/// hostile server's answer arriving as TLS records. The server is OpenSSL in this process, on a
/// loopback connection (through memory BIOs, so it sends with `MSG_NOSIGNAL` as the client does),
/// with a certificate the client trusts; it completes the handshake, sends an
/// empty SETTINGS frame, waits for the client's request, then writes the input in records of the
/// chosen size (one `SSL_write` each), with TLS 1.3 key updates when asked, and closes with or
/// without close_notify.
///
/// This reaches the client's record reads past the handshake (`CiphertextBIO` taking a record at a
/// time from lent and kept ciphertext, `TLSSession`'s decrypt loop, post-handshake messages such
/// as NewSessionTicket and KeyUpdate, close_notify against a bare close) with nghttp2 above it.
/// The oracles are `h2-client`'s: the call ends, the connection's thread finishes, nothing leaks,
/// the body stays within its limits.
///
/// Input: a byte for the record size (below 128: 1–128 bytes; from 128: (n − 127) × 128 bytes, at
/// most 16 KiB), a byte of flags (1: a key update before the first record, the client asked to
/// update too; 2: a key update after every fourth record; 4: close_notify before the close), then
/// the server's HTTP/2 bytes after its SETTINGS frame, as for `h2-client`.
enum HTTP2TLSClientTarget {
    /// This target's own listening socket (`h2-client` has another).
    private static let listener = Result { () throws(OracleViolation) in try HTTP2ClientTarget.Listener() }

    static func run(_ bytes: [UInt8]) throws(OracleViolation) {
        _ = try play(bytes)
    }

    /// Runs one input; what the client made of the answer (`h2-client`'s ``HTTP2ClientTarget/ClientOutcome/answer``),
    /// nil for an input too short to run.
    static func play(_ bytes: [UInt8]) throws(OracleViolation) -> String? {
        guard bytes.count >= 2 else { return nil }
        let recordSize = bytes[0] < 128 ? Int(bytes[0]) + 1 : (Int(bytes[0]) - 127) * 128
        let flags = bytes[1]
        let answer = bytes[2...]
        let peer = try TLSPeer.shared.get()
        let server = try listener.get()
        server.turn.lock()
        defer { server.turn.unlock() }
        let outcome = HTTP2ClientTarget.ClientOutcome()
        let port = server.port
        let clientContext = peer.clientContext
        Task(executorPreference: ClientThreadExecutor.shared) {
            await outcome.play(port: port, tls: clientContext)
        }

        let connection = try server.accept()
        defer { close(connection) }
        guard let ssl = SSL_new(peer.context), let input = BIO_new(BIO_s_mem()), let output = BIO_new(BIO_s_mem())
        else { throw OracleViolation("SSL_new or BIO_new failed") }
        defer { SSL_free(ssl) }
        SSL_set_bio(ssl, input, output)
        let accepted = try step(ssl, connection, "the handshake") { SSL_accept(ssl) }
        try require(accepted > 0, "the client closed mid-handshake")
        // An empty SETTINGS frame: the server's preface.
        try require(write(ssl, connection, [0, 0, 0, 4, 0, 0, 0, 0, 0]), "the client did not take the SETTINGS frame")
        try HTTP2ClientTarget.waitForRequestHeaders { buffer throws(OracleViolation) in
            Int(
                try step(ssl, connection, "reading the request") {
                    SSL_read(ssl, buffer.baseAddress, Int32(buffer.count))
                }
            )
        }

        // The server's bytes; a client that closed early makes the rest fail, which is fine.
        if flags & 1 != 0 { SSL_key_update(ssl, SSL_KEY_UPDATE_REQUESTED) }
        var records = 0
        var start = answer.startIndex
        while start < answer.endIndex {
            let end = min(start + recordSize, answer.endIndex)
            guard write(ssl, connection, answer[start..<end]) else { break }
            records += 1
            if flags & 2 != 0 && records % 4 == 0 { SSL_key_update(ssl, SSL_KEY_UPDATE_NOT_REQUESTED) }
            start = end
        }
        if flags & 4 != 0 {
            _ = SSL_shutdown(ssl)
            _ = try? flush(ssl, connection)
        }
        shutdown(connection, Int32(SHUT_WR))
        HTTP2ClientTarget.drain(connection)

        let stepTimeout = HTTP2ClientTarget.stepTimeout
        guard outcome.finished.wait(timeout: .now() + .milliseconds(Int(stepTimeout))) == .success else {
            throw OracleViolation("the call did not end within \(stepTimeout) ms after the server closed")
        }
        guard outcome.closed.wait(timeout: .now() + .milliseconds(Int(stepTimeout))) == .success else {
            throw OracleViolation("the connection's thread did not end within \(stepTimeout) ms")
        }
        if let violation = outcome.violation.withLock({ $0 }) { throw violation }
        try ResourceWatch.check()
        return outcome.answer.withLock { $0 }
    }

    /// Runs an OpenSSL call until it makes progress: what it wrote goes to the client, and what
    /// it wants to read comes from the client (waiting up to `h2-client`'s step timeout each
    /// time). Its result when positive; 0 when the client closed or sent close_notify.
    @discardableResult
    private static func step(
        _ ssl: OpaquePointer,
        _ fd: Int32,
        _ what: String,
        _ operation: () -> Int32
    ) throws(OracleViolation) -> Int32 {
        while true {
            ERR_clear_error()
            let result = operation()
            try flush(ssl, fd)
            if result > 0 { return result }
            let error = SSL_get_error(ssl, result)
            switch error {
            case SSL_ERROR_WANT_READ:
                guard HTTP2ClientTarget.waitFor(POLLIN, on: fd) else {
                    throw OracleViolation("\(what): the client went quiet")
                }
                // Made here, not per call: a write of a one-byte record never reads.
                var buffer = [UInt8](repeating: 0, count: 16384)
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return 0 }
                _ = buffer.withUnsafeBytes { BIO_write(SSL_get_rbio(ssl), $0.baseAddress, Int32(count)) }
            case SSL_ERROR_ZERO_RETURN:
                return 0
            default:
                throw OracleViolation("\(what) failed (SSL error \(error)): \(OpenSSLErrors.drain())")
            }
        }
    }

    /// Sends what OpenSSL wrote to its output BIO.
    private static func flush(_ ssl: OpaquePointer, _ fd: Int32) throws(OracleViolation) {
        let output = SSL_get_wbio(ssl)
        let pending = Int(BIO_ctrl_pending(output))
        guard pending > 0 else { return }
        var records = [UInt8](repeating: 0, count: pending)
        let read = records.withUnsafeMutableBytes { BIO_read(output, $0.baseAddress, Int32($0.count)) }
        try require(read == pending, "the output BIO gave \(read) of \(pending) bytes")
        try HTTP2ClientTarget.send(records, to: fd)
    }

    /// Writes `bytes` as one record; false when the client no longer takes them.
    private static func write(_ ssl: OpaquePointer, _ fd: Int32, _ bytes: some Collection<UInt8>) -> Bool {
        let sent = try? Array(bytes).withUnsafeBytes { buffer throws(OracleViolation) in
            try step(ssl, fd, "writing") { SSL_write(ssl, buffer.baseAddress, Int32(buffer.count)) }
        }
        return sent != nil && sent != 0
    }

    /// The server's side: an OpenSSL context with a fresh Ed25519 certificate for 127.0.0.1, and
    /// the client's context that trusts that certificate alone, both made once per process.
    final class TLSPeer: @unchecked Sendable {  // Immutable after init; SSL_CTX is safe to share once set up.
        static let shared: Result<TLSPeer, OracleViolation> = Result { () throws(OracleViolation) in try TLSPeer() }

        let context: OpaquePointer
        let clientContext: TLSContext

        private init() throws(OracleViolation) {
            guard let keyContext = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nil) else {
                throw OracleViolation("no Ed25519 key context")
            }
            defer { EVP_PKEY_CTX_free(keyContext) }
            var generated: OpaquePointer?
            guard EVP_PKEY_keygen_init(keyContext) == 1, EVP_PKEY_keygen(keyContext, &generated) == 1,
                let key = generated
            else { throw OracleViolation("Ed25519 key generation failed: \(OpenSSLErrors.drain())") }
            defer { EVP_PKEY_free(key) }

            guard let certificate = X509_new() else { throw OracleViolation("X509_new failed") }
            defer { X509_free(certificate) }
            let name = X509_get_subject_name(certificate)
            guard let alternativeNames = X509V3_EXT_conf_nid(nil, nil, NID_subject_alt_name, "IP:127.0.0.1") else {
                throw OracleViolation("no subjectAltName: \(OpenSSLErrors.drain())")
            }
            defer { X509_EXTENSION_free(alternativeNames) }
            guard X509_set_version(certificate, 2) == 1,
                ASN1_INTEGER_set(X509_get_serialNumber(certificate), 1) == 1,
                X509_gmtime_adj(X509_getm_notBefore(certificate), -3600) != nil,
                X509_gmtime_adj(X509_getm_notAfter(certificate), 86_400) != nil,
                X509_set_pubkey(certificate, key) == 1,
                X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, "fuzz.test", -1, -1, 0) == 1,
                X509_set_issuer_name(certificate, name) == 1,
                X509_add_ext(certificate, alternativeNames, -1) == 1,
                X509_sign(certificate, key, nil) > 0
            else { throw OracleViolation("the certificate could not be made: \(OpenSSLErrors.drain())") }

            guard let context = SSL_CTX_new(TLS_server_method()) else { throw OracleViolation("SSL_CTX_new failed") }
            guard SSL_CTX_use_certificate(context, certificate) == 1, SSL_CTX_use_PrivateKey(context, key) == 1 else {
                SSL_CTX_free(context)
                throw OracleViolation("the server's identity was refused: \(OpenSSLErrors.drain())")
            }
            SSL_CTX_set_alpn_select_cb(context, selectH2, nil)
            self.context = context

            guard let bio = BIO_new(BIO_s_mem()) else { throw OracleViolation("BIO_new failed") }
            defer { BIO_free(bio) }
            guard PEM_write_bio_X509(bio, certificate) == 1 else { throw OracleViolation("PEM_write_bio_X509 failed") }
            var pem = [UInt8](repeating: 0, count: Int(BIO_ctrl_pending(bio)))
            let read = pem.withUnsafeMutableBytes { BIO_read(bio, $0.baseAddress, Int32($0.count)) }
            try require(read == pem.count, "the certificate's PEM was cut short")

            var configuration = TLSClientConfiguration()
            configuration.trustsSystemRoots = false
            configuration.additionalTrustRootsPEM = [String(decoding: pem, as: UTF8.self)]
            do {
                clientContext = try TLSContext(configuration)
            } catch {
                throw OracleViolation("the client's context refused the certificate: \(error)")
            }
        }
    }
}

/// ALPN on the server's side: `h2` when the client offers it (the only protocol it offers).
private func selectH2(
    _ ssl: OpaquePointer?,
    _ out: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
    _ outLength: UnsafeMutablePointer<UInt8>?,
    _ offered: UnsafePointer<UInt8>?,
    _ offeredLength: UInt32,
    _ argument: UnsafeMutableRawPointer?
) -> Int32 {
    guard let offered, let out, let outLength else { return SSL_TLSEXT_ERR_ALERT_FATAL }
    var index = 0
    while index < Int(offeredLength) {
        let length = Int(offered[index])
        if length == 2 && index + 2 < Int(offeredLength) && offered[index + 1] == UInt8(ascii: "h")
            && offered[index + 2] == UInt8(ascii: "2")
        {
            out.pointee = offered + index + 1
            outLength.pointee = 2
            return SSL_TLSEXT_ERR_OK
        }
        index += 1 + length
    }
    return SSL_TLSEXT_ERR_ALERT_FATAL
}
