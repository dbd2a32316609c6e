import Foundation
import TestSupport
import Testing

/// OpenSSL's clean-up at exit is off: a program that exits while a connection's I/O thread still
/// frees its TLS session must not have OpenSSL free the same state beside it (CI once saw
/// auth_sample abort with "double free or corruption" that way).
@Suite("OpenSSL at exit")
struct OpenSSLExitTests {
    @Test(
        "after the transport's first use of OpenSSL, OpenSSL still works in an exit handler that runs after any of its own"
    )
    func noCleanUpAtExit() async throws {
        let capture = try await ChildProcess.capture(
            PackageRoot.builtProduct("ConnectProbe"),
            ["--openssl-at-exit"],
            timeout: .seconds(30)
        )
        let stdout = String(decoding: capture.stdout, as: UTF8.self)
        let stderr = String(decoding: capture.stderr, as: UTF8.self)
        #expect(capture.exit?.code == 0, "\(stderr)")
        #expect(stdout == "{\"openssl_at_exit\": \"usable\"}\n", "\(stdout) \(stderr)")
    }
}
