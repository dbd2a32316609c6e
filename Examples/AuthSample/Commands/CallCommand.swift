import ArgumentParser
import AuthRPC
import AuthRPCXDS
import AuthSampleService
import Foundation
import GoogleAuth
import OAuth2

/// `auth_sample call`: calls grpc.testing.TestService/UnaryCall with the session's token.
struct CallCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "call",
        abstract: "Call grpc.testing.TestService/UnaryCall and show the user and scope the server saw."
    )

    @Option(
        name: .long,
        help:
            "The server: host:port, or xds:///NAME to take it from the xDS control plane that GRPC_XDS_BOOTSTRAP or GRPC_XDS_BOOTSTRAP_CONFIG names."
    )
    var target = "grpc-test.sandbox.googleapis.com:443"

    @Flag(
        name: .long,
        help:
            "With an xds:/// target: after the call, print what the channel's xDS client holds (control plane, each resource's version, NACK reasons)."
    )
    var xdsStatus = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Trust this CA (PEM file): the server's certificate must lead to it, instead of the system's roots; token endpoints trust it besides them.",
            valueName: "file"
        )
    )
    var caCert: String?

    @Option(
        name: .long,
        help:
            "The name the server's certificate must carry (and the :authority), when it differs from the target's host."
    )
    var authority: String?

    @Flag(name: .long, help: "HTTP/2 without TLS (h2c). Credentials need --allow-insecure-credentials too.")
    var plaintext = false

    @Flag(name: .long, help: "Allow sending the token over --plaintext (a local test server only).")
    var allowInsecureCredentials = false

    @Option(name: .long, help: "An access token to send (instead of the stored session).")
    var token: String?

    @Option(name: .long, help: ArgumentHelp("A file holding the access token to send.", valueName: "file"))
    var tokenFile: String?

    @Flag(name: .long, help: "Send no credentials at all.")
    var anonymous = false

    @Option(
        name: .long,
        help: ArgumentHelp("Request metadata, key=value (repeatable); -bin keys take base64.", valueName: "key=value")
    )
    var metadata: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "How long the call may take, token refresh included: seconds, or 500ms, 3s, 2m (at most 1h; default 30).",
            valueName: "duration"
        ),
        transform: DurationArgument.parse
    )
    var timeout = DurationArgument(seconds: 30)

    @Flag(inversion: .prefixedNo, help: "Ask the server for the user it saw.")
    var fillUsername = true

    @Flag(inversion: .prefixedNo, help: "Ask the server for the OAuth scope it saw.")
    var fillOauthScope = true

    @Flag(
        name: .long,
        help:
            "Print one JSON object instead of text (a failure too: its exit_code and, for a failed call, its gRPC status as code)."
    )
    var json = false

    @OptionGroup(title: "Google credentials (instead of a stored session)") var google: GoogleCredentialOptions

    @OptionGroup var common: CommonOptions

    /// The environment variable read for a token when no flag names one.
    static let tokenEnvironmentVariable = "AUTH_SAMPLE_ACCESS_TOKEN"

    func validate() throws {
        if xdsStatus, !isXDSTarget {
            throw ValidationError("--xds-status needs an xds:///NAME --target")
        }
        guard [token != nil, tokenFile != nil, anonymous, google.isSelected].filter({ $0 }).count <= 1 else {
            throw ValidationError(
                "give at most one of --token, --token-file, --anonymous, --adc, --service-account-key and --authorized-user"
            )
        }
        if google.impersonatesWithSession, token != nil || tokenFile != nil || anonymous {
            throw ValidationError(
                "--impersonate-service-account impersonates with Google credentials or the stored session, not --token, --token-file or --anonymous"
            )
        }
        if plaintext, caCert != nil {
            throw ValidationError("--ca-cert is for TLS; it makes no sense with --plaintext")
        }
        if allowInsecureCredentials, !plaintext {
            throw ValidationError("--allow-insecure-credentials only applies with --plaintext")
        }
    }

    func run() async throws {
        try await runReportingFailures(json: json) { () async throws(ToolFailure) in try await call() }
    }

    private func call() async throws(ToolFailure) {
        let requestMetadata = try MetadataArgument.parse(metadata)
        let credentials = try resolveCredentials(oauth: try OAuthTrust.transport(caCert: caCert))
        if plaintext, credentials.value != nil, !allowInsecureCredentials {
            throw ToolFailure(
                status: .insecureCredentials,
                message: "refusing to send an access token over a plaintext connection to \(target)",
                hint: "use TLS (drop --plaintext), or add --allow-insecure-credentials for a local test server"
            )
        }
        let channel = try makeChannel()
        var options = CallOptions(
            timeout: timeout.duration,
            credentials: credentials.value,
            initialMetadata: requestMetadata,
            allowsInsecureCredentials: allowInsecureCredentials
        )
        options.userAgentPrefix = "auth_sample/0.1"
        var request = AuthSample_Request()
        request.fillUsername = fillUsername
        request.fillOauthScope = fillOauthScope

        let tokenBefore = await credentials.session?.state.accessToken
        let outcome: Result<UnaryResponse<AuthSample_Response>, RPCError>
        do throws(RPCError) {
            outcome = .success(
                try await AuthSample_TestServiceClient(channel: channel).unaryCall(request, options: options)
            )
        } catch {
            outcome = .failure(error)
        }
        // Read while the channel is up: its xDS client goes with it.
        let xds = xdsStatus ? await XDSScheme.clientStatus() : nil
        // The connection ends (GOAWAY, close_notify) before the tool prints and exits.
        await channel.shutdown()
        let response: UnaryResponse<AuthSample_Response>
        switch outcome {
        case .success(let answer):
            response = answer
        case .failure(let error):
            var failure = Failures.call(error, target: target, credentials: credentials)
            failure.details += Output.xdsStatusLines(xds ?? [])
            throw failure
        }
        let tokenAfter = await credentials.session?.state.accessToken
        let refreshed = credentials.session != nil && tokenBefore != tokenAfter
        let expiry = await credentials.session?.state.accessTokenExpiresAt
        Output.printCall(
            CallResult(
                target: target,
                username: response.message.username,
                scope: response.message.oauthScope,
                credentialSource: credentials.source,
                refreshed: refreshed,
                tokenExpiresAt: expiry,
                headers: response.headers,
                trailers: response.trailers,
                xdsStatus: xds
            ),
            json: json
        )
    }

    private var isXDSTarget: Bool { target.lowercased().hasPrefix("xds:") }

    private func makeChannel() throws(ToolFailure) -> Channel {
        let security: TransportSecurity
        if plaintext {
            security = .plaintext
        } else {
            var tls = TLSConfiguration(serverHostnameOverride: authority)
            if let caCert {
                tls.trustRoots = .certificates(
                    pem: try LocalFile.text(
                        at: caCert,
                        option: "--ca-cert",
                        limit: LocalFile.certificateLimit,
                        what: "CA certificates"
                    )
                )
            }
            security = .tls(tls)
        }
        // The scheme reads the bootstrap from the environment when the channel is made.
        if isXDSTarget { XDSScheme.register() }
        do throws(RPCError) {
            var channelOptions = CallOptions()
            channelOptions.authority = plaintext ? authority : nil
            return try Channel(
                target: target,
                transportSecurity: security,
                defaultCallOptions: channelOptions,
                logger: common.logger(label: "auth_sample.channel")
            )
        } catch {
            throw ToolFailure(status: .usage, message: error.message)
        }
    }

    /// Where the token comes from: a flag, Google credentials, the environment, or the stored
    /// session (the default).
    private func resolveCredentials(oauth: any OAuthTransport) throws(ToolFailure) -> ResolvedCredentials {
        if anonymous {
            return ResolvedCredentials(value: nil, source: "none", session: nil, sessionName: nil)
        }
        if google.isSelected {
            let selection = try google.resolve(logger: common.logger(label: "auth_sample.google"), transport: oauth)
            let identity = selection.credentials.identity
            var source = "\(identity.kind.rawValue) \(identity.principal) from \(selection.origin); \(selection.tokens)"
            if let quota = identity.quotaProjectID { source += "; quota project \(quota)" }
            return ResolvedCredentials(
                value: .provider(selection.credentials),
                source: source,
                session: nil,
                sessionName: nil,
                google: selection
            )
        }
        if let token {
            return ResolvedCredentials(
                value: .accessToken(try checkedToken(token, from: "--token")),
                source: "--token",
                session: nil,
                sessionName: nil
            )
        }
        if let tokenFile {
            let text = try LocalFile.text(
                at: tokenFile,
                option: "--token-file",
                limit: LocalFile.tokenLimit,
                what: "an access token"
            )
            return ResolvedCredentials(
                value: .accessToken(try checkedToken(text, from: "--token-file \(tokenFile)")),
                source: "--token-file",
                session: nil,
                sessionName: nil
            )
        }
        if let fromEnvironment = ProcessInfo.processInfo.environment[Self.tokenEnvironmentVariable],
            !fromEnvironment.isEmpty
        {
            return ResolvedCredentials(
                value: .accessToken(try checkedToken(fromEnvironment, from: "$\(Self.tokenEnvironmentVariable)")),
                source: "$\(Self.tokenEnvironmentVariable)",
                session: nil,
                sessionName: nil
            )
        }
        let handle = try common.store()
        let state = try handle.require()
        let session = AuthSession(
            state: state,
            store: handle.store,
            transport: oauth,
            logger: common.logger(label: "auth_sample.session")
        )
        if google.impersonatesWithSession {
            // The session's tokens authenticate the IAM Credentials requests (gcloud's flag over a login).
            let selection = try google.impersonating(
                session,
                origin: "session '\(handle.name)'",
                sourceTokens: "the session's access token",
                quotaProjectID: nil,
                logger: common.logger(label: "auth_sample.google"),
                transport: oauth
            )
            let identity = selection.credentials.identity
            return ResolvedCredentials(
                value: .provider(selection.credentials),
                source: "\(identity.kind.rawValue) \(identity.principal) from \(selection.origin); \(selection.tokens)",
                session: nil,
                sessionName: handle.name,
                google: selection
            )
        }
        return ResolvedCredentials(
            value: .provider(session),
            source: "session '\(handle.name)'",
            session: session,
            sessionName: handle.name
        )
    }

    /// A token from a flag or file: surrounding whitespace trimmed, and it must fit in a header.
    private func checkedToken(_ text: String, from source: String) throws(ToolFailure) -> String {
        let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty, token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw ToolFailure(
                status: .usage,
                message: "the access token from \(source) is empty or has characters a header cannot carry"
            )
        }
        return token
    }
}

/// The credentials of one call and where they came from (for messages; never the token).
struct ResolvedCredentials {
    var value: CallCredentials?
    var source: String
    var session: AuthSession?
    var sessionName: String?
    var google: GoogleSelection?
}
