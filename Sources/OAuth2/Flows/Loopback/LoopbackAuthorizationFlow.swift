import AuthRPCSyntax
public import Foundation

/// The authorization code grant through a loopback redirect (RFC 8252) with PKCE S256
/// (RFC 7636): the user signs in in a browser, which comes back to a port this process listens
/// on. No embedded web view, ever.
///
/// ```swift
/// let flow = LoopbackAuthorizationFlow(configuration: configuration, client: client, scopes: scopes)
/// let pending = try flow.start()
/// openInBrowser(pending.authorizationURL)   // or print it
/// let state = try await pending.complete()
/// ```
public struct LoopbackAuthorizationFlow: Sendable {
    /// The authorization server's endpoints (an authorization endpoint is required).
    public let configuration: ServiceConfiguration
    /// The client signing in.
    public let client: OAuthClient
    /// The scopes asked for.
    public let scopes: [String]
    /// The path of the redirect URI.
    public let redirectPath: String
    /// How long to wait for the browser to come back.
    public let timeout: Duration
    private let transport: any OAuthTransport
    /// What local clients can make the redirect receiver hold (connections, time, head size).
    let receiverLimits: ReceiverLimits

    typealias ReceiverLimits = LoopbackRequestReceiver.Limits

    /// Creates a flow.
    ///
    /// - Parameters:
    ///   - configuration: The authorization server's endpoints; its authorization endpoint must be
    ///     https (http only on loopback), checked by ``start()``.
    ///   - client: The client signing in (a public client needs no secret: PKCE protects the code).
    ///   - scopes: The scopes asked for, sent space-separated.
    ///   - redirectPath: The redirect URI's path; `/oauth2callback` by default.
    ///   - timeout: How long ``PendingAuthorization/complete()`` waits for the browser; 5 minutes by default.
    ///   - transport: How the code exchange reaches the token endpoint.
    public init(
        configuration: ServiceConfiguration,
        client: OAuthClient,
        scopes: [String],
        redirectPath: String = "/oauth2callback",
        timeout: Duration = .seconds(300),
        transport: any OAuthTransport = HTTP1OAuthTransport.standard
    ) {
        self.init(
            configuration: configuration,
            client: client,
            scopes: scopes,
            redirectPath: redirectPath,
            timeout: timeout,
            transport: transport,
            receiverLimits: ReceiverLimits()
        )
    }

    /// ``init(configuration:client:scopes:redirectPath:timeout:transport:)`` with other limits
    /// for the redirect receiver.
    init(
        configuration: ServiceConfiguration,
        client: OAuthClient,
        scopes: [String],
        redirectPath: String = "/oauth2callback",
        timeout: Duration = .seconds(300),
        transport: any OAuthTransport = HTTP1OAuthTransport.standard,
        receiverLimits: ReceiverLimits
    ) {
        self.configuration = configuration
        self.client = client
        self.scopes = scopes
        self.redirectPath = redirectPath.hasPrefix("/") ? redirectPath : "/" + redirectPath
        self.timeout = timeout
        self.transport = transport
        self.receiverLimits = receiverLimits
    }

    /// Starts listening on `127.0.0.1` (a port the system picks) and builds the URL to open.
    ///
    /// - Throws: ``OAuthError/Kind/invalidConfiguration`` without an authorization endpoint, or
    ///   with one that is not https off loopback (the user would sign in over plain http);
    ///   ``OAuthError/Kind/flowFailed`` when no loopback port can be opened (or no random value made).
    public func start() throws(OAuthError) -> PendingAuthorization {
        guard let endpoint = configuration.authorizationEndpoint else {
            throw OAuthError(.invalidConfiguration, "the authorization server has no authorization endpoint")
        }
        try EndpointSecurity.require(endpoint, for: "the authorization endpoint")
        let pkce = try PKCE()
        let state = try PKCE.randomToken(byteCount: 24)
        let receiver: LoopbackRequestReceiver
        do throws(LoopbackRequestReceiver.Failure) {
            receiver = try LoopbackRequestReceiver(host: "127.0.0.1")
        } catch {
            throw OAuthError(.flowFailed, "cannot listen for the browser's redirect: \(error)")
        }
        let redirectURI = "http://127.0.0.1:\(receiver.port)\(redirectPath)"
        var components = URLComponents(url: endpoint, resolvingAgainstBaseURL: false)
        var items = components?.queryItems ?? []
        items += [
            URLQueryItem(name: "response_type", value: "code"),
            URLQueryItem(name: "client_id", value: client.id),
            URLQueryItem(name: "redirect_uri", value: redirectURI),
            URLQueryItem(name: "scope", value: scopes.joined(separator: " ")),
            URLQueryItem(name: "state", value: state),
            URLQueryItem(name: "code_challenge", value: pkce.challenge),
            URLQueryItem(name: "code_challenge_method", value: pkce.method),
        ]
        // Encode the query strictly, so a scope's ':' and '/' and the space survive every server.
        components?.percentEncodedQuery = items.map {
            "\(PercentEncoding.encodeUnreserved($0.name))=\(PercentEncoding.encodeUnreserved($0.value ?? ""))"
        }.joined(separator: "&")
        guard let url = components?.url else {
            throw OAuthError(.invalidConfiguration, "cannot build an authorization URL from \(endpoint.redacted)")
        }
        return PendingAuthorization(
            flow: self,
            receiver: receiver,
            authorizationURL: url,
            redirectURI: redirectURI,
            pkce: pkce,
            state: state
        )
    }

    /// A sign-in waiting for the browser: open ``authorizationURL``, then ``complete()``.
    public final class PendingAuthorization: Sendable {
        /// The URL to open in the user's browser.
        public let authorizationURL: URL
        /// The redirect URI the browser comes back to.
        public let redirectURI: String

        private let flow: LoopbackAuthorizationFlow
        private let receiver: LoopbackRequestReceiver
        private let pkce: PKCE
        private let state: String

        fileprivate init(
            flow: LoopbackAuthorizationFlow,
            receiver: LoopbackRequestReceiver,
            authorizationURL: URL,
            redirectURI: String,
            pkce: PKCE,
            state: String
        ) {
            self.flow = flow
            self.receiver = receiver
            self.authorizationURL = authorizationURL
            self.redirectURI = redirectURI
            self.pkce = pkce
            self.state = state
        }

        /// Waits for the redirect that carries this sign-in's `state`, and exchanges its code
        /// (with the PKCE verifier) for tokens. The listener is closed afterwards, whatever happened.
        ///
        /// Any local process can reach the redirect port: a request with another `state` (or
        /// none, or with a parameter repeated) is answered 400 and the wait goes on, so a forged
        /// redirect can neither complete nor abort the sign-in.
        ///
        /// - Throws: ``OAuthError``: `flowFailed` on timeout, cancellation, or a redirect without
        ///   a code; an authorization error when the user or the server refused (`access_denied`,
        ///   …) or the code exchange was refused; `transient` when the token endpoint could not
        ///   be reached.
        public func complete() async throws(OAuthError) -> AuthState {
            defer { receiver.close() }
            let expectedState = state
            let redirect: LoopbackRequestHead
            do throws(LoopbackRequestReceiver.Failure) {
                redirect = try await receiver.receive(
                    path: flow.redirectPath,
                    timeout: flow.timeout,
                    limits: flow.receiverLimits
                ) { head in
                    guard let parameters = head.queryParameters else {
                        return .reject(Self.page(status: 400, "This request is not a well-formed redirect."))
                    }
                    guard Self.constantTimeEqual(parameters["state"], expectedState) else {
                        return .reject(
                            Self.page(status: 400, "This request does not belong to the sign-in in progress.")
                        )
                    }
                    let completed = parameters["code"] != nil && parameters["error"] == nil
                    return .accept(
                        completed
                            ? Self.page(status: 200, "Signed in. You can close this window and return to the terminal.")
                            : Self.page(
                                status: 400,
                                "The sign-in did not complete. Return to the terminal for details."
                            )
                    )
                }
            } catch {
                throw OAuthError(
                    .flowFailed,
                    error.isTimeout ? "the browser did not come back in time: \(error)" : "\(error)"
                )
            }
            // Accepted above only when its parameters decode, so never empty here for that reason.
            let parameters = redirect.queryParameters ?? [:]
            if let error = parameters["error"] {
                let code = TokenSyntax.isErrorCode(error) ? error : "invalid_request"
                let description = parameters["error_description"].map { ": \(TokenSyntax.bounded($0))" } ?? ""
                throw OAuthError(
                    .authorization,
                    "the sign-in was refused (\(code))\(description)",
                    oauthErrorCode: code
                )
            }
            guard let code = parameters["code"], !code.isEmpty else {
                throw OAuthError(.flowFailed, "the redirect carried no authorization code")
            }
            let endpoint = TokenEndpoint(
                configuration: flow.configuration,
                client: flow.client,
                transport: flow.transport
            )
            let response = try await endpoint.requestToken([
                ("grant_type", "authorization_code"),
                ("code", code),
                ("redirect_uri", redirectURI),
                ("code_verifier", pkce.verifier),
            ])
            var state = AuthState(
                configuration: flow.configuration,
                client: flow.client,
                scopes: flow.scopes,
                grant: GrantRecord(type: .authorizationCode, redirectURI: redirectURI)
            )
            state.apply(response, receivedAt: Date())
            return state
        }

        /// Whether ``complete()`` is waiting for the redirect on the receiver's thread.
        var isReceiving: Bool { receiver.isServing }

        /// Stops waiting: a ``complete()`` in progress fails with `flowFailed`.
        public func cancel() {
            receiver.close()
        }

        /// Compares the redirect's `state` with ours without an early exit a local process could time.
        private static func constantTimeEqual(_ received: String?, _ expected: String) -> Bool {
            guard let received else { return false }
            let a = Array(received.utf8)
            let b = Array(expected.utf8)
            guard a.count == b.count else { return false }
            return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
        }

        private static func page(status: Int, _ message: String) -> LoopbackRequestReceiver.Response {
            LoopbackRequestReceiver.Response(
                status: status,
                html: "<!doctype html><meta charset=utf-8><title>swift-authrpc sign-in</title><p>\(message)</p>"
            )
        }
    }
}
