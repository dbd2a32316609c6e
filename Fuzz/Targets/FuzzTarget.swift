/// One fuzz target: a parser the library feeds with bytes from the network or disk, driven by
/// arbitrary input.
///
/// A target must never trap, whatever the input: a trap, a sanitizer report, a timeout or an
/// out-of-memory is a finding. Beyond not trapping, each target checks what must hold of its
/// parser's answers (a value it accepted obeys its own rules, an encoding reads back); a broken
/// rule is thrown as an ``OracleViolation``, which the fuzzer turns into a crash and the replay
/// test into a failure.
struct FuzzTarget: Sendable {
    /// The name `make fuzz` and the corpus folders use (`Fuzz/Corpus/<name>`).
    let name: String
    /// The longest input worth trying (libFuzzer's `-max_len`): a little over what the parser
    /// takes before its own size limit refuses.
    let maxLength: Int
    /// Runs one input.
    let run: @Sendable ([UInt8]) throws(OracleViolation) -> Void

    /// Every target, in the order `make fuzz` runs them.
    static let all: [FuzzTarget] = [
        FuzzTarget(name: "grpc-response", maxLength: 8192, run: GRPCResponseTarget.run),
        FuzzTarget(name: "grpc-metadata", maxLength: 4096, run: GRPCMetadataTarget.run),
        FuzzTarget(name: "grpc-compression", maxLength: 16384, run: GRPCCompressionTarget.run),
        FuzzTarget(name: "grpc-timeout", maxLength: 64, run: GRPCTimeoutTarget.run),
        FuzzTarget(name: "token-response", maxLength: 4096, run: TokenResponseTarget.run),
        FuzzTarget(name: "device-authorization", maxLength: 4096, run: DeviceAuthorizationTarget.run),
        FuzzTarget(name: "discovery-document", maxLength: 4096, run: DiscoveryDocumentTarget.run),
        FuzzTarget(name: "id-token", maxLength: 4096, run: IDTokenTarget.run),
        FuzzTarget(name: "gtm-oauth2", maxLength: 4096, run: GTMOAuth2Target.run),
        FuzzTarget(name: "session-file", maxLength: 8192, run: SessionFileTarget.run),
        FuzzTarget(name: "loopback-request", maxLength: 4096, run: LoopbackRequestTarget.run),
        FuzzTarget(name: "oauth-syntax", maxLength: 1024, run: OAuthSyntaxTarget.run),
        FuzzTarget(name: "service-account-key", maxLength: 8192, run: ServiceAccountKeyTarget.run),
        FuzzTarget(name: "authorized-user", maxLength: 4096, run: AuthorizedUserTarget.run),
        FuzzTarget(name: "adc-file", maxLength: 8192, run: ADCFileTarget.run),
        FuzzTarget(name: "h2-client", maxLength: 16384, run: HTTP2ClientTarget.run),
        FuzzTarget(name: "proxy-connect-answer", maxLength: 20000, run: ProxyConnectAnswerTarget.run),
        FuzzTarget(name: "http1-response", maxLength: 8192, run: HTTP1ResponseTarget.run),
        FuzzTarget(name: "tls-handshake", maxLength: 16384, run: TLSHandshakeTarget.run),
        FuzzTarget(name: "h2-tls-client", maxLength: 16386, run: HTTP2TLSClientTarget.run),
        FuzzTarget(name: "response-body", maxLength: 2049, run: ResponseBodyTarget.run),
    ]

    /// The target called `name`.
    static func named(_ name: String) -> FuzzTarget? {
        all.first { $0.name == name }
    }
}

/// A rule a parser's answer must obey, broken by some input.
struct OracleViolation: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// Throws an ``OracleViolation`` unless `condition` holds.
func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) throws(OracleViolation) {
    if !condition() { throw OracleViolation(message()) }
}

/// Whether `text` is one line of visible ASCII and spaces, as a message shown in a terminal must be.
func isPrintable(_ text: String) -> Bool {
    text.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
}
