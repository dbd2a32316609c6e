// The one place the public TLS settings meet the transport's: channels and OAuth2's HTTP/1.1
// transport both build their OpenSSL contexts from this, so the two trust the same roots.
package import AuthRPCTransport

extension TLSConfiguration {
    /// The transport's settings for these: roots, client certificate, minimum version.
    package var clientConfiguration: TLSClientConfiguration {
        var configuration = TLSClientConfiguration()
        switch trustRoots.wrapped {
        case .system:
            configuration.trustsSystemRoots = true
        case .certificates(let pem):
            configuration.trustsSystemRoots = false
            configuration.additionalTrustRootsPEM = [pem]
        case .systemAndCertificates(let pem):
            configuration.trustsSystemRoots = true
            configuration.additionalTrustRootsPEM = [pem]
        }
        configuration.certificateChainPEM = clientCertificateChainPEM
        configuration.privateKeyPEM = clientPrivateKeyPEM
        configuration.minimumVersion = minimumVersion == .tls13 ? .tls13 : .tls12
        return configuration
    }
}
