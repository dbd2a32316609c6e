import AuthRPCTransport
import Testing

@testable import AuthRPC

@Suite("TransportSecurity and TLS trust roots")
struct TransportSecurityTests {
    static let pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

    @Test("TLS holds its configuration, plaintext none; only TLS is secure")
    func security() {
        let tls = TransportSecurity.tls(TLSConfiguration(serverHostnameOverride: "example.com"))
        #expect(tls.tlsConfiguration?.serverHostnameOverride == "example.com")
        #expect(tls.isSecure)
        #expect(TransportSecurity.tls().tlsConfiguration?.trustRoots == .system)
        #expect(TransportSecurity.plaintext.tlsConfiguration == nil)
        #expect(!TransportSecurity.plaintext.isSecure)
    }

    @Test("trust roots say whether the system's roots count and which PEM text was given")
    func trustRoots() {
        let system = TLSConfiguration.TrustRoots.system
        let only = TLSConfiguration.TrustRoots.certificates(pem: Self.pem)
        let both = TLSConfiguration.TrustRoots.systemAndCertificates(pem: Self.pem)
        #expect(system.includesSystemRoots && system.certificatesPEM == nil)
        #expect(!only.includesSystemRoots && only.certificatesPEM == Self.pem)
        #expect(both.includesSystemRoots && both.certificatesPEM == Self.pem)
        #expect(only == .certificates(pem: Self.pem))
        #expect(only != .certificates(pem: "other"))
        #expect(only != both)
        #expect(system != both)
    }

    @Test("the client configuration trusts what the roots say, and the summary names them without PEM text")
    func clientConfiguration() {
        let cases: [(TLSConfiguration.TrustRoots, Bool, [String], String)] = [
            (.system, true, [], "system"),
            (.certificates(pem: Self.pem), false, [Self.pem], "custom"),
            (.systemAndCertificates(pem: Self.pem), true, [Self.pem], "system+custom"),
        ]
        for (roots, system, additional, name) in cases {
            let configuration = TLSConfiguration(trustRoots: roots)
            #expect(configuration.clientConfiguration.trustsSystemRoots == system)
            #expect(configuration.clientConfiguration.additionalTrustRootsPEM == additional)
            #expect(
                configuration.description
                    == "TLSConfiguration(trustRoots: \(name), clientCertificate: false, serverHostnameOverride: none, minimumVersion: tls12)"
            )
        }
    }
}
