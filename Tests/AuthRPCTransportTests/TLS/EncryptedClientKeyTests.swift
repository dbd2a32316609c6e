import AuthRPCSystem
import AuthRPCTransport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A client key for mutual TLS is read without ever asking for a password: OpenSSL's default
/// password callback reads one from the terminal (or, with no terminal, from standard input),
/// which would hang a server or a CLI, or quietly take whatever stdin holds.
@Suite("Client private keys: never a password prompt")
struct EncryptedClientKeyTests {
    /// A throwaway EC P-256 key, encrypted (PKCS#8, AES-256-CBC) with ``password``, and its
    /// self-signed certificate.
    static let encryptedKey = """
        -----BEGIN ENCRYPTED PRIVATE KEY-----
        MIHsMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAiI/bYQjsZDTAICCAAw
        DAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEEENkr55lzBCp7AIXDNqKVNYEgZCS
        gpAd3wOXbgyeIaIPdfN+UvDlyKDGetQaA6IB+6jSQSjDltFQF2HB4W6qONEfU6Qc
        GKoBaqzLm1zGBhpQCDAOezU6u0kpfr89nglmAFi98sITFkiG+Xsh0Hr5PJpq/QOw
        fqi5kXF3w2OEiVIMaT/Fi+HHrUSMItbAZXJdKQLWJKqwhSezWP+R4MbDOC4etDM=
        -----END ENCRYPTED PRIVATE KEY-----
        """
    static let certificate = """
        -----BEGIN CERTIFICATE-----
        MIIBoDCCAUWgAwIBAgIUSIzk8EZWs+NK4X7H+TiSsEiId+gwCgYIKoZIzj0EAwIw
        JDEiMCAGA1UEAwwZZW5jcnlwdGVkLWNsaWVudC1rZXktdGVzdDAgFw0yNjExMjMx
        NzMwMjlaGA8yMTI2MTAzMDE3MzAyOVowJDEiMCAGA1UEAwwZZW5jcnlwdGVkLWNs
        aWVudC1rZXktdGVzdDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABIcNu92LtcBh
        Zdnnw4GJmDNoUoKIgmX2tshagCg4Z/BqkQysMYvDBRO7anI8NqS3x0+AWmVXFnP7
        zD5V+YVR71KjUzBRMB0GA1UdDgQWBBSQQ1ri4r5nbeKLz/LKstmYKeRvPTAfBgNV
        HSMEGDAWgBSQQ1ri4r5nbeKLz/LKstmYKeRvPTAPBgNVHRMBAf8EBTADAQH/MAoG
        CCqGSM49BAMCA0kAMEYCIQDjY4Vgz7o44r1awRwORwb7XIE6ek5SuCC3PKrLRHVZ
        wgIhAPLVrqf3/i2IHX4mmIbmwlgNqbHSd7rsKHzZXvNvMblR
        -----END CERTIFICATE-----
        """
    static let password = "swordfish-password"

    /// Standard input is process-wide: one test at a time swaps it.
    private static let standardInput = Locked(())

    @Test("an encrypted client key is refused with a clear error, and the password waiting on stdin is never read")
    func encryptedKeyIsRefusedWithoutReadingStdin() throws {
        var configuration = TLSClientConfiguration()
        configuration.trustsSystemRoots = false
        configuration.certificateChainPEM = Self.certificate
        configuration.privateKeyPEM = Self.encryptedKey

        let (outcome, unread) = try Self.withStandardInput(Self.password + "\n") {
            () -> Result<TLSContext, TransportFailure> in
            do throws(TransportFailure) { return .success(try TLSContext(configuration)) } catch {
                return .failure(error)
            }
        }
        guard case .failure(let error) = outcome else {
            Issue.record("the encrypted key was decrypted with a password read from standard input")
            return
        }
        guard case .tls(let failure) = error else {
            Issue.record("got \(error)")
            return
        }
        #expect(failure.kind == .invalidConfiguration)
        #expect(failure.detail.contains("encrypted"), "\(failure)")
        #expect(!failure.detail.contains(Self.password))
        #expect(unread == Self.password + "\n", "standard input was read")
    }

    @Test("an unencrypted client key still loads, and it must match the certificate")
    func unencryptedKeyLoads() throws {
        var configuration = TLSClientConfiguration()
        configuration.trustsSystemRoots = false
        configuration.certificateChainPEM = Self.certificate
        configuration.privateKeyPEM = Self.unencryptedKey
        _ = try TLSContext(configuration)
        configuration.privateKeyPEM = Self.otherKey
        #expect(throws: TransportFailure.self) { try TLSContext(configuration) }
    }

    /// The same key as ``encryptedKey``, unencrypted (PKCS#8).
    static let unencryptedKey = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgV5+OsRu39FuowhGv
        OTPiPtyRGD+vsxu5dYMhjy4K97KhRANCAASHDbvdi7XAYWXZ58OBiZgzaFKCiIJl
        9rbIWoAoOGfwapEMrDGLwwUTu2pyPDakt8dPgFplVxZz+8w+VfmFUe9S
        -----END PRIVATE KEY-----
        """
    /// Another EC P-256 key, which does not match ``certificate``.
    static let otherKey = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg5+SKfh8DmlgpC2vY
        257erQh5qLoXFlGyvvfJQYwkM7KhRANCAATIVkGPG4GrEKSYSIOeV7pMacCUhlP0
        4p25bP4E4WPpSi0xhtW5k09lnXRBhOrr1mwpBwQUjg9KG1BvTHvrpBfS
        -----END PRIVATE KEY-----
        """

    /// Runs `body` with standard input reading `text` from a pipe, then returns what `body`
    /// returned and what was left unread on that pipe.
    private static func withStandardInput<R>(_ text: String, _ body: () -> R) throws -> (R, String) {
        try standardInput.withLock { _ in
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { throw PipeError("pipe: \(errno)") }
            let (reader, writer) = (fds[0], fds[1])
            defer { close(reader) }
            let bytes = Array(text.utf8)
            guard write(writer, bytes, bytes.count) == bytes.count else { throw PipeError("write: \(errno)") }
            close(writer)
            let saved = dup(STDIN_FILENO)
            guard saved >= 0, dup2(reader, STDIN_FILENO) >= 0 else { throw PipeError("dup2: \(errno)") }
            let result = body()
            // Whatever C stdio buffered from the pipe counts as read: drop it with the pipe.
            _ = dup2(saved, STDIN_FILENO)
            close(saved)
            var left: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 256)
            while case let count = read(reader, &buffer, buffer.count), count > 0 {
                left += buffer[..<count]
            }
            return (result, String(decoding: left, as: UTF8.self))
        }
    }

    struct PipeError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
