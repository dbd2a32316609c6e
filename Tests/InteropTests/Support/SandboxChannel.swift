import AuthRPC
import AuthSampleService
import Foundation
import TestSupport

/// Channels to the sandbox's grpcio test service.
enum SandboxChannel {
    /// TLS to `localhost` (resolving to ::1 and 127.0.0.1; the service listens on 127.0.0.1, so
    /// this also exercises fail-over across addresses), trusting only the sandbox's CA.
    static func tls(
        credentials: CallCredentials? = .accessToken(Peers.staticToken),
        serverName: String? = nil,
        trustSandboxCA: Bool = true,
        sandbox own: SandboxInfo? = nil
    ) async throws -> Channel {
        let sandbox = if let own { own } else { try await Peers.sandbox() }
        let roots: TLSConfiguration.TrustRoots = trustSandboxCA ? .certificates(pem: sandbox.caCertificatePEM) : .system
        return try Channel(
            target: "localhost:\(sandbox.tlsPort)",
            transportSecurity: .tls(TLSConfiguration(trustRoots: roots, serverHostnameOverride: serverName)),
            defaultCallOptions: CallOptions(credentials: credentials)
        )
    }

    static func plaintext(options: CallOptions = CallOptions()) async throws -> Channel {
        let sandbox = try await Peers.sandbox()
        return try Channel(
            target: "127.0.0.1:\(sandbox.plaintextPort)",
            transportSecurity: .plaintext,
            defaultCallOptions: options
        )
    }

    static let testScope = "https://www.googleapis.com/auth/xapi.zoo"
}

/// A token provider that counts how often it is asked.
final class CountingProvider: AuthTokenProvider, @unchecked Sendable {
    // `lock` guards `calls`.
    private let lock = NSLock()
    private var calls = 0
    let tokenValue: String

    init(token: String) { tokenValue = token }

    var callCount: Int { lock.withLock { calls } }

    func token() async throws -> String {
        lock.withLock { calls += 1 }
        return tokenValue
    }
}
