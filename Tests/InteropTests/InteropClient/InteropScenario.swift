import Testing

/// One run of interop_client: a case, the transport, the credentials it is given, and the
/// fault the server is asked to commit (none for a run that must pass).
struct InteropScenario: Sendable, CustomTestStringConvertible {
    /// Where the auth cases' credentials come from.
    enum Credentials: String, Sendable {
        case none
        /// The metadata-server emulator through GCE_METADATA_HOST, --default_service_account its account.
        case metadata
        /// The sandbox's service-account key in --service_account_key_file, with --oauth_scope.
        case keyWithScope
        /// The key alone (self-signed JWTs).
        case key
        /// Application Default Credentials: GOOGLE_APPLICATION_CREDENTIALS names the key.
        case adcKey
        /// Application Default Credentials from the metadata server, with --oauth_scope.
        case adcMetadata
    }

    var testCase: String
    var transport: InteropServer.Transport
    var credentials = Credentials.none
    /// An `x-sandbox-fault` for the server, sent through --additional_metadata.
    var fault: String?
    /// More flags.
    var extra: [String] = []

    var testDescription: String {
        var text = "\(testCase) over \(transport)"
        if credentials != .none { text += " with \(credentials)" }
        if let fault { text += ", server fault \(fault)" }
        return text
    }

    /// The command line and environment against `server`.
    func invocation(_ server: InteropServer) -> (arguments: [String], environment: [String: String]) {
        var arguments = server.flags(transport) + ["--test_case=\(testCase)"]
        var environment: [String: String] = [:]
        switch credentials {
        case .none: break
        case .metadata:
            environment["GCE_METADATA_HOST"] = server.metadataHost
            arguments += ["--default_service_account=\(server.metadataEmail)", "--oauth_scope=\(InteropServer.scope)"]
        case .keyWithScope:
            arguments += ["--service_account_key_file=\(server.keyFile)", "--oauth_scope=\(InteropServer.scope)"]
        case .key:
            arguments += ["--service_account_key_file=\(server.keyFile)"]
        case .adcKey:
            environment["GOOGLE_APPLICATION_CREDENTIALS"] = server.keyFile
            arguments += ["--default_service_account=\(server.keyEmail)"]
        case .adcMetadata:
            environment["GCE_METADATA_HOST"] = server.metadataHost
            arguments += ["--default_service_account=\(server.metadataEmail)", "--oauth_scope=\(InteropServer.scope)"]
        }
        if let fault { arguments.append("--additional_metadata=x-sandbox-fault:\(fault)") }
        return (arguments + extra, environment)
    }
}
