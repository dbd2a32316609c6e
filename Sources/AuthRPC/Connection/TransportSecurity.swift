/// How a channel protects its connections.
///
/// A struct rather than an enum so that later versions can add ways of securing a connection
/// without breaking code that names them.
public struct TransportSecurity: Sendable {
    enum Wrapped: Sendable {
        case tls(TLSConfiguration)
        case plaintext
    }

    let wrapped: Wrapped

    private init(_ wrapped: Wrapped) {
        self.wrapped = wrapped
    }

    /// TLS 1.2 or later with ALPN `h2`, verifying the server's certificate and name as
    /// `configuration` says.
    public static func tls(_ configuration: TLSConfiguration = TLSConfiguration()) -> Self {
        Self(.tls(configuration))
    }

    /// HTTP/2 over plain TCP (prior knowledge, h2c). Credentials are refused on it unless a call
    /// opts in with ``CallOptions/allowsInsecureCredentials``.
    public static var plaintext: Self { Self(.plaintext) }

    /// The TLS configuration, for a channel that uses TLS; `nil` for ``plaintext``.
    public var tlsConfiguration: TLSConfiguration? {
        if case .tls(let configuration) = wrapped { return configuration }
        return nil
    }

    var isSecure: Bool { tlsConfiguration != nil }
}

/// What a TLS channel trusts and presents. Verification of the server is always on.
public struct TLSConfiguration: Sendable, CustomStringConvertible {
    /// Which root certificates the server's chain must lead to.
    ///
    /// A struct rather than an enum so that later versions can add places to find roots (a
    /// file, a directory) without breaking code that names them.
    public struct TrustRoots: Sendable, Hashable {
        enum Wrapped: Sendable, Hashable {
            case system
            case certificates(pem: String)
            case systemAndCertificates(pem: String)
        }

        let wrapped: Wrapped

        private init(_ wrapped: Wrapped) {
            self.wrapped = wrapped
        }

        /// The system's roots (OpenSSL's default locations).
        public static let system = Self(.system)

        /// Only these roots (PEM text, one or more certificates), e.g. a private CA.
        public static func certificates(pem: String) -> Self {
            Self(.certificates(pem: pem))
        }

        /// The system's roots and these (PEM text, one or more certificates).
        public static func systemAndCertificates(pem: String) -> Self {
            Self(.systemAndCertificates(pem: pem))
        }

        /// Whether the system's roots are trusted: for ``system`` and
        /// ``systemAndCertificates(pem:)``.
        public var includesSystemRoots: Bool {
            switch wrapped {
            case .system, .systemAndCertificates: return true
            case .certificates: return false
            }
        }

        /// The roots given as PEM text, for ``certificates(pem:)`` and
        /// ``systemAndCertificates(pem:)``; `nil` for ``system``.
        public var certificatesPEM: String? {
            switch wrapped {
            case .system: return nil
            case .certificates(let pem), .systemAndCertificates(let pem): return pem
            }
        }
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
        switch trustRoots.wrapped {
        case .system: roots = "system"
        case .certificates: roots = "custom"
        case .systemAndCertificates: roots = "system+custom"
        }
        return "TLSConfiguration(trustRoots: \(roots), clientCertificate: \(clientCertificateChainPEM != nil), "
            + "serverHostnameOverride: \(serverHostnameOverride ?? "none"), minimumVersion: \(minimumVersion))"
    }
}
