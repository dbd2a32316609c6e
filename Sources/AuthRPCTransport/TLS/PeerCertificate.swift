internal import COpenSSL

/// The server's leaf certificate as the TLS handshake verified it (chain and name), kept for the
/// connection's life to answer which other names it is valid for: a call that sends a different
/// `:authority` on the connection must name a host the certificate covers (gRPC C++'s call-host
/// check), or a token minted for that host would go to a server that cannot prove it is that host.
package final class PeerCertificate: @unchecked Sendable {
    // Sendable: the X509 is never changed after the handshake; X509_check_host and
    // X509_check_ip_asc only read it, and OpenSSL guards the extension cache they fill with its
    // own lock, so any thread may ask.
    private let certificate: OpaquePointer

    /// Takes ownership of one reference to `certificate`.
    fileprivate init(taking certificate: OpaquePointer) {
        self.certificate = certificate
    }

    deinit {
        X509_free(certificate)
    }

    /// Whether the certificate is valid for `host` (a DNS name, matched against its subject
    /// alternative names with OpenSSL's rules, wildcards included; or an IP address, matched
    /// against its IP addresses), as the handshake checks the connection's own name.
    package func covers(host: String) -> Bool {
        if AddressResolver.isIPAddress(host) {
            return X509_check_ip_asc(certificate, host, 0) == 1
        }
        guard !host.isEmpty, !host.utf8.contains(0) else { return false }
        return X509_check_host(certificate, host, host.utf8.count, 0, nil) == 1
    }
}

extension TLSSession {
    /// The verified leaf after a successful handshake.
    func verifiedPeerCertificate() -> PeerCertificate? {
        SSL_get1_peer_certificate(ssl).map(PeerCertificate.init(taking:))
    }
}
