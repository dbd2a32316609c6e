import ArgumentParser
import Foundation
import OAuth2

/// `auth_sample login`: signs in and saves the session.
struct LoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Sign in (device flow or browser with PKCE) and save the session."
    )

    @Option(
        name: .long,
        help: ArgumentHelp("The authorization server's issuer URL (read with discovery).", valueName: "url")
    )
    var issuer: String?

    @Flag(name: .long, help: "Use Google's endpoints.")
    var google = false

    @Option(name: .long, help: "The OAuth client id.")
    var clientID: String

    @Option(
        name: .long,
        help: "The client secret, for clients that have one (read from $AUTH_SAMPLE_CLIENT_SECRET when not given)."
    )
    var clientSecret: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A scope to ask for (repeatable). Default: openid, email and the test scope.",
            valueName: "scope"
        )
    )
    var scope: [String] = []

    @Flag(name: .long, help: "Sign in on another device with a code (the default without a graphical display).")
    var device = false

    @Flag(name: .long, help: "Sign in in this machine's browser, redirected to a loopback port (PKCE).")
    var browser = false

    @Flag(name: .long, help: "With --browser: print the URL instead of opening it.")
    var noOpen = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "How long to wait for the sign-in: seconds, or 90s, 10m (at most 1h; default 600).",
            valueName: "duration"
        ),
        transform: DurationArgument.parse
    )
    var waitTimeout = DurationArgument(seconds: 600)

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Also trust this CA (PEM file) for the issuer's endpoints (discovery, sign-in, token).",
            valueName: "file"
        )
    )
    var caCert: String?

    @OptionGroup var common: CommonOptions

    func validate() throws {
        guard (issuer == nil) != !google else {
            throw ValidationError("give exactly one of --issuer URL and --google")
        }
        guard !(device && browser) else { throw ValidationError("give --device or --browser, not both") }
        if let issuer, URL(string: issuer)?.host == nil {
            throw ValidationError("--issuer '\(issuer)' is not a URL")
        }
    }

    func run() async throws {
        try await runReportingFailures { () async throws(ToolFailure) in try await login() }
    }

    private var scopes: [String] {
        scope.isEmpty
            ? ["openid", "email", ServiceConfiguration.googleTestScope]
            : scope.flatMap { $0.split(separator: " ").map(String.init) }
    }

    /// Device flow unless --browser, or unless there is a display and --device was not asked for.
    private var usesBrowser: Bool {
        if browser { return true }
        if device { return false }
        #if os(macOS)
        return true
        #else
        let environment = ProcessInfo.processInfo.environment
        return environment["DISPLAY"] != nil || environment["WAYLAND_DISPLAY"] != nil
        #endif
    }

    private func login() async throws(ToolFailure) {
        let handle = try common.store()
        let transport = try OAuthTrust.transport(caCert: caCert)
        let configuration = try await serviceConfiguration(transport: transport)
        let secret = clientSecret ?? ProcessInfo.processInfo.environment["AUTH_SAMPLE_CLIENT_SECRET"]
        let client = OAuthClient(id: clientID, secret: secret)
        let state: AuthState
        do throws(OAuthError) {
            state =
                usesBrowser
                ? try await browserSignIn(configuration: configuration, client: client, transport: transport)
                : try await deviceSignIn(configuration: configuration, client: client, transport: transport)
        } catch {
            throw Failures.signIn(error)
        }
        try handle.save(state)
        let identity = IdentitySummary(state: state)
        Output.line(
            "Signed in\(identity.map { " as \($0)" } ?? "") with scopes: \(state.effectiveScopes.joined(separator: " "))"
        )
        Output.line("Session '\(handle.name)' saved to \(handle.path)")
    }

    private func serviceConfiguration(
        transport: any OAuthTransport
    ) async throws(ToolFailure) -> ServiceConfiguration {
        guard let issuer, let url = URL(string: issuer) else { return .google }
        do throws(OAuthError) {
            return try await ServiceConfiguration.discover(issuer: url, transport: transport)
        } catch {
            throw ToolFailure(
                status: error.isTransient ? .tokenEndpointUnavailable : .signInFailed,
                message: "cannot read the issuer's configuration: \(error.message)",
                hint: "check --issuer (it must be the issuer URL exactly, as its discovery document names it)"
            )
        }
    }

    private func deviceSignIn(
        configuration: ServiceConfiguration,
        client: OAuthClient,
        transport: any OAuthTransport
    ) async throws(OAuthError) -> AuthState {
        let flow = DeviceAuthorizationFlow(
            configuration: configuration,
            client: client,
            scopes: scopes,
            transport: transport
        )
        let authorization = try await flow.start()
        Output.copyableLine(
            "To sign in, open \(authorization.verificationURI) and enter the code \(authorization.userCode)"
        )
        if let complete = authorization.verificationURIComplete {
            Output.copyableLine("(or open \(complete))")
        }
        let indicator = WaitingIndicator(message: "Waiting for you to approve the sign-in")
        defer { indicator.stop() }
        let timeout = ContinuousClock.now + waitTimeout.duration
        let wait = Task { () async throws(OAuthError) -> AuthState in
            try await flow.waitForApproval(of: authorization) { event in
                switch event {
                case .pending: break  // the spinner shows that polling goes on
                case .slowDown(let interval):
                    indicator.note(
                        "the server asked to poll more slowly: every \(interval.formatted(.units(allowed: [.seconds]))) from now on"
                    )
                case .transientFailure(let reason):
                    indicator.note("cannot reach the token endpoint (\(reason)); still trying")
                }
            }
        }
        let deadline = Task {
            try? await Task.sleep(until: timeout, clock: .continuous)
            wait.cancel()
        }
        defer { deadline.cancel() }
        do {
            return try await wait.value
        } catch let error as OAuthError {
            if error.kind == .flowFailed, ContinuousClock.now >= timeout {
                throw OAuthError(.flowFailed, "no approval within --wait-timeout \(waitTimeout)")
            }
            throw error
        } catch {
            throw OAuthError(.flowFailed, "\(error)")
        }
    }

    private func browserSignIn(
        configuration: ServiceConfiguration,
        client: OAuthClient,
        transport: any OAuthTransport
    ) async throws(OAuthError) -> AuthState {
        let flow = LoopbackAuthorizationFlow(
            configuration: configuration,
            client: client,
            scopes: scopes,
            timeout: waitTimeout.duration,
            transport: transport
        )
        let pending = try flow.start()
        if noOpen || !Browser.open(pending.authorizationURL) {
            Output.line("Open this URL in a browser to sign in:")
        } else {
            Output.line("Your browser was opened to sign in. If it did not open, visit:")
        }
        Output.copyableLine(pending.authorizationURL.absoluteString)
        let indicator = WaitingIndicator(message: "Waiting for the browser to come back to \(pending.redirectURI)")
        defer { indicator.stop() }
        return try await pending.complete()
    }
}
