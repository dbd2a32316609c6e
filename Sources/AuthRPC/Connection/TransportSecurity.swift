/// How a channel protects its connections.
public enum TransportSecurity: Sendable {
    /// TLS 1.2 or later with ALPN `h2`, verifying the server's certificate and name.
    case tls(TLSConfiguration = TLSConfiguration())
    /// HTTP/2 over plain TCP (prior knowledge, h2c). Credentials are refused on it unless a call
    /// opts in with ``CallOptions/allowsInsecureCredentials``.
    case plaintext

    var isSecure: Bool {
        if case .tls = self { return true }
        return false
    }
}

/// What a TLS channel trusts and presents. Verification of the server is always on.
public struct TLSConfiguration: Sendable, CustomStringConvertible {
    /// Which root certificates the server's chain must lead to.
    public enum TrustRoots: Sendable {
        /// The system's roots (OpenSSL's default locations).
        case system
        /// Only these roots (PEM text, one or more certificates), e.g. a private CA.
        case certificates(pem: String)
        /// The system's roots and these.
        case systemAndCertificates(pem: String)
    }

    /// The lowest TLS version accepted.
    public enum MinimumVersion: Sendable {
        /// TLS 1.2.
        case tls12
        /// TLS 1.3.
        case tls13
    }

    /// The trusted roots; the system's by default.
    public var trustRoots: TrustRoots
    /// A client certificate chain (PEM, leaf first) for mutual TLS.
    public var clientCertificateChainPEM: String?
    /// The client certificate's private key (PEM). Never printed.
    public var clientPrivateKeyPEM: String?
    /// The name the server's certificate must be valid for (and the SNI name), when it differs
    /// from the host connected to. It also becomes the default `:authority`.
    public var serverHostnameOverride: String?
    /// The lowest TLS version accepted; TLS 1.2 by default.
    public var minimumVersion: MinimumVersion

    /// Creates a configuration; the defaults verify against the system's roots.
    public init(
        trustRoots: TrustRoots = .system,
        clientCertificateChainPEM: String? = nil,
        clientPrivateKeyPEM: String? = nil,
        serverHostnameOverride: String? = nil,
        minimumVersion: MinimumVersion = .tls12
    ) {
        self.trustRoots = trustRoots
        self.clientCertificateChainPEM = clientCertificateChainPEM
        self.clientPrivateKeyPEM = clientPrivateKeyPEM
        self.serverHostnameOverride = serverHostnameOverride
        self.minimumVersion = minimumVersion
    }

    /// A summary that never includes the private key.
    public var description: String {
        let roots: String
        switch trustRoots {
        case .system: roots = "system"
        case .certificates: roots = "custom"
        case .systemAndCertificates: roots = "system+custom"
        }
        return "TLSConfiguration(trustRoots: \(roots), clientCertificate: \(clientCertificateChainPEM != nil), "
            + "serverHostnameOverride: \(serverHostnameOverride ?? "none"), minimumVersion: \(minimumVersion))"
    }
}
