import AuthCrypto
import AuthRPCSystem
internal import COpenSSL

/// One TLS client session, driven by the connection's I/O thread.
///
/// OpenSSL never touches the socket: it reads the ciphertext the connection received where it
/// lies (``receiving(_:_:)``), and writes the records it produces into the connection's output
/// queue, so that they leave in one `send` (with MSG_NOSIGNAL, so a closed peer can never raise
/// SIGPIPE).
final class TLSSession {
    let ssl: OpaquePointer
    private let ciphertext: CiphertextBIO
    private let serverName: String
    private let applicationProtocol: TLSClientConfiguration.ApplicationProtocol
    /// Set (by the info callback, inside SSL_read) when OpenSSL refused a renegotiation the
    /// server asked for; the connection then ends (RFC 9113 section 9.2.1).
    private let refusedRenegotiation: UnsafeMutablePointer<Bool>

    /// Prepares a session that verifies the server as `serverName` (a DNS name, which also goes in
    /// SNI, or an IP literal, checked against the certificate's IP addresses), and appends every
    /// record it produces to `output`.
    init(context: TLSContext, serverName: String, output: ByteQueue) throws(TransportFailure) {
        guard let ssl = SSL_new(context.context) else {
            throw .tls(TLSFailure(.invalidConfiguration, OpenSSLErrors.drain()))
        }
        let ciphertext = CiphertextBIO(output: output)
        // One BIO reads and writes; SSL_set_bio takes its one reference.
        SSL_set_bio(ssl, ciphertext.bio, ciphertext.bio)
        SSL_set_connect_state(ssl)
        self.ssl = ssl
        self.ciphertext = ciphertext
        self.serverName = serverName
        self.applicationProtocol = context.applicationProtocol
        refusedRenegotiation = .allocate(capacity: 1)
        refusedRenegotiation.initialize(to: false)
        SSL_set_ex_data(ssl, 0, refusedRenegotiation)
        SSL_set_info_callback(ssl, Self.noteRefusedRenegotiation)
        if AddressResolver.isIPAddress(serverName) {
            guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), serverName) == 1 else {
                throw .tls(TLSFailure(.invalidConfiguration, "cannot verify IP address '\(serverName)'"))
            }
        } else {
            guard copenssl_set_tlsext_host_name(ssl, serverName) == 1, SSL_set1_host(ssl, serverName) == 1 else {
                throw .tls(TLSFailure(.invalidConfiguration, "invalid server name '\(serverName)'"))
            }
        }
    }

    deinit {
        SSL_free(ssl)  // frees the BIO too
        refusedRenegotiation.deallocate()
    }

    /// Frees what OpenSSL keeps for the calling thread (its random generators, its error
    /// queue). OpenSSL does this itself when a thread exits, but only after the thread's last
    /// code has run, which may be after a program that waited for it has begun to exit.
    static func releaseThreadState() {
        OPENSSL_thread_stop()
    }

    /// OpenSSL's info callback: renegotiation is off (SSL_OP_NO_RENEGOTIATION), so a server's
    /// HelloRequest is answered with a no_renegotiation warning alert; seeing that alert go out is
    /// how the client learns the server asked.
    private static let noteRefusedRenegotiation: @convention(c) (OpaquePointer?, Int32, Int32) -> Void = {
        ssl,
        kind,
        value in
        let noRenegotiation: Int32 = 100  // SSL_AD_NO_RENEGOTIATION (RFC 5246 section 7.2.2)
        guard kind & SSL_CB_ALERT != 0, kind & SSL_CB_WRITE != 0, value & 0xFF == noRenegotiation,
            let flag = SSL_get_ex_data(ssl, 0)
        else { return }
        flag.assumingMemoryBound(to: Bool.self).pointee = true
    }

    /// Runs the handshake to completion over `socket` (sending the output queue as it goes), then
    /// checks that ALPN chose the context's protocol (`h2`; or `http/1.1`, or nothing, for an
    /// HTTP/1.1 context).
    func handshake(
        over socket: StreamSocket,
        deadline: ContinuousClock.Instant,
        abortFD: Int32,
        scratch: UnsafeMutableRawBufferPointer
    ) throws(TransportFailure) {
        var result = SSL_do_handshake(ssl)
        while true {
            try sendAll(ciphertext.output, over: socket, deadline: deadline, abortFD: abortFD)
            if result == 1 { break }
            let error = SSL_get_error(ssl, result)
            guard error == SSL_ERROR_WANT_READ else {
                throw .tls(handshakeFailure())
            }
            try wait(for: Int16(POLLIN), on: socket, deadline: deadline, abortFD: abortFD)
            switch socket.receive(into: scratch) {
            case .bytes(let count):
                // What the server sent after its Finished stays for the first read.
                result = receiving(UnsafeRawBufferPointer(rebasing: scratch[0..<count])) { SSL_do_handshake(ssl) }
            case .wouldBlock:
                continue
            case .closed:
                throw .tls(failureAfterPeerClosed())
            case .failed(let reason):
                throw .tls(TLSFailure(.handshakeFailed, reason))
            }
        }
        var protocolName: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &protocolName, &length)
        let selected =
            protocolName.map { String(decoding: UnsafeBufferPointer(start: $0, count: Int(length)), as: UTF8.self) }
            ?? ""
        switch applicationProtocol {
        case .http2:
            guard selected == "h2" else {
                throw .tls(
                    TLSFailure(
                        .alpnNotNegotiated,
                        selected.isEmpty
                            ? "no protocol selected" : "server selected '\(Printable.text(selected, limit: 40))'"
                    )
                )
            }
        case .http1:
            // No ALPN at all is HTTP/1.1 too; the server cannot pick what was not offered.
            guard selected.isEmpty || selected == "http/1.1" else {
                throw .tls(
                    TLSFailure(
                        .handshakeFailed,
                        "server selected '\(Printable.text(selected, limit: 40))', not http/1.1"
                    )
                )
            }
        }
    }

    /// Copies ciphertext received before the session began (after a proxy's answer) for
    /// OpenSSL's first reads.
    func feed(_ bytes: UnsafeRawBufferPointer) {
        ciphertext.keep(bytes)
    }

    /// Runs `body` (the handshake's steps, or ``decrypt(into:)`` until it needs input) with
    /// `bytes`, ciphertext just received, readable by OpenSSL where they lie; what it has not
    /// read when `body` returns is copied for its next read.
    func receiving<Result, Failure: Error>(
        _ bytes: UnsafeRawBufferPointer,
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try ciphertext.lending(bytes, body)
    }

    /// What decrypting produced.
    enum ReadOutcome {
        /// Decrypted bytes (at most the scratch buffer's size).
        case bytes(Int)
        /// Nothing more until more ciphertext arrives.
        case needsInput
        /// The peer closed the TLS session (close_notify).
        case closed
        /// A TLS error (bad record, alert).
        case failed(String)
    }

    /// Decrypts into `buffer` what the received ciphertext holds.
    func decrypt(into buffer: UnsafeMutableRawBufferPointer) -> ReadOutcome {
        let count = SSL_read(ssl, buffer.baseAddress, Int32(buffer.count))
        if count > 0 { return .bytes(Int(count)) }
        switch SSL_get_error(ssl, count) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            if refusedRenegotiation.pointee {
                return .failed(
                    "the server asked for a TLS renegotiation, which HTTP/2 forbids (RFC 9113 section 9.2.1)"
                )
            }
            return .needsInput
        case SSL_ERROR_ZERO_RETURN:
            return .closed
        default:
            let reason = OpenSSLErrors.drain()
            return .failed(reason.isEmpty ? "TLS read failed" : reason)
        }
    }

    /// Encrypts `plaintext`, appending the records to the output queue.
    func encrypt(_ plaintext: UnsafeRawBufferPointer) throws(TransportFailure) {
        var offset = 0
        while offset < plaintext.count {
            let written = SSL_write(
                ssl,
                plaintext.baseAddress! + offset,
                Int32(min(plaintext.count - offset, Int(Int32.max)))
            )
            guard written > 0 else {
                throw .connectionClosed(reason: "TLS write failed: \(OpenSSLErrors.drain())", streamWasSent: false)
            }
            offset += Int(written)
        }
    }

    private func sendAll(
        _ queue: ByteQueue,
        over socket: StreamSocket,
        deadline: ContinuousClock.Instant,
        abortFD: Int32
    ) throws(TransportFailure) {
        while !queue.isEmpty {
            switch socket.send(queue.readable) {
            case .bytes(let count):
                queue.consume(count)
            case .wouldBlock:
                try wait(for: Int16(POLLOUT), on: socket, deadline: deadline, abortFD: abortFD)
            case .closed:
                throw .tls(TLSFailure(.handshakeFailed, "connection closed by the server"))
            case .failed(let reason):
                throw .tls(TLSFailure(.handshakeFailed, reason))
            }
        }
    }

    private func wait(
        for events: Int16,
        on socket: StreamSocket,
        deadline: ContinuousClock.Instant,
        abortFD: Int32
    ) throws(TransportFailure) {
        switch socket.wait(for: events, deadline: deadline, abortFD: abortFD) {
        case .ready: return
        case .timedOut: throw .tls(TLSFailure(.handshakeFailed, "timed out"))
        case .aborted: throw .tls(TLSFailure(.handshakeFailed, "connection attempt abandoned"))
        }
    }

    /// Classifies a failed handshake: verification result first, then OpenSSL's error queue.
    private func handshakeFailure() -> TLSFailure {
        let verification = Int32(SSL_get_verify_result(ssl))
        if verification != X509_V_OK {
            let reason = String(cString: X509_verify_cert_error_string(Int(verification)))
            ERR_clear_error()
            switch verification {
            case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH:
                return TLSFailure(.hostnameMismatch, "certificate is not valid for '\(serverName)': \(reason)")
            case X509_V_ERR_CERT_HAS_EXPIRED, X509_V_ERR_CERT_NOT_YET_VALID:
                return TLSFailure(.certificateExpired, reason)
            default:
                return TLSFailure(.untrustedCertificate, reason)
            }
        }
        let reason = OpenSSLErrors.drain()
        return TLSFailure(.handshakeFailed, reason.isEmpty ? "the server ended the handshake" : reason)
    }

    private func failureAfterPeerClosed() -> TLSFailure {
        let reason = OpenSSLErrors.drain()
        return TLSFailure(
            .handshakeFailed,
            reason.isEmpty ? "connection closed by the server during the handshake" : reason
        )
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
