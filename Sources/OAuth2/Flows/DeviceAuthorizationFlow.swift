public import Foundation

/// The device authorization grant (RFC 8628): the user signs in on another device, typing a code
/// at a URL, while this one polls the token endpoint. The flow for CLIs and headless machines.
///
/// ```swift
/// let flow = DeviceAuthorizationFlow(configuration: configuration, client: client, scopes: scopes)
/// let authorization = try await flow.start()
/// print("Open \(authorization.verificationURI) and enter \(authorization.userCode)")
/// let state = try await flow.waitForApproval(of: authorization)
/// ```
public struct DeviceAuthorizationFlow: Sendable {
    /// The authorization server's endpoints (a device authorization endpoint is required).
    public let configuration: ServiceConfiguration
    /// The client signing in.
    public let client: OAuthClient
    /// The scopes asked for.
    public let scopes: [String]
    private let transport: any OAuthTransport

    /// Creates a flow.
    public init(
        configuration: ServiceConfiguration,
        client: OAuthClient,
        scopes: [String],
        transport: any OAuthTransport = HTTP1OAuthTransport.standard
    ) {
        self.configuration = configuration
        self.client = client
        self.scopes = scopes
        self.transport = transport
    }

    /// What to show the user, and what the flow needs to poll.
    public struct Authorization: Sendable, CustomStringConvertible {
        /// The code the user types.
        public let userCode: String
        /// Where the user goes (https, or http on loopback).
        public let verificationURI: URL
        /// The same page with the code filled in, when the server offers one.
        public let verificationURIComplete: URL?
        /// When the codes stop working: `expires_in` after they were issued, kept within
        /// ``lifetimeBounds`` (30 minutes when the server did not say).
        public let expiresAt: Date
        /// The polling interval the server asked for at the start, within ``intervalBounds``.
        public let interval: Duration
        /// The secret the flow polls with. Never printed.
        let deviceCode: String

        /// The polling interval is kept within 1...60 s. Under a second would poll the server
        /// in a tight loop; a server asking for more than a minute (or for 1e300 s) would leave
        /// the user waiting that long after approving. Absent, or not a number: RFC 8628's 5 s.
        public static let intervalBounds: ClosedRange<TimeInterval> = 1...60
        /// The codes' lifetime is kept within 1 s...1 h: a device code is meant to be typed in
        /// within minutes (RFC 8628's example is 30), and an unbounded one would poll forever.
        /// Absent, or not a number: 30 minutes.
        public static let lifetimeBounds: ClosedRange<TimeInterval> = 1...3600
        /// The longest `user_code` taken (it is shown to the user; RFC 8628 section 6.1 wants it short).
        static let maximumUserCodeLength = 128
        /// The longest verification URI taken.
        static let maximumURILength = 2048

        /// The user code and URL; never the device code.
        public var description: String {
            "DeviceAuthorization(userCode: \(userCode), verificationURI: \(verificationURI), expiresAt: \(expiresAt))"
        }

        /// Parses a device authorization response (RFC 8628 section 3.2) received at `receivedAt`,
        /// clamping `interval` and `expires_in` to ``intervalBounds`` and ``lifetimeBounds``.
        ///
        /// - Throws: ``OAuthError/Kind/transient`` when it lacks `device_code`, `user_code` or
        ///   `verification_uri` (Google's `verification_url` is read too) or has malformed ones;
        ///   ``OAuthError/Kind/invalidConfiguration`` for a verification page that is not https
        ///   off loopback. Messages name the field, never a code's value.
        package init(parsing data: Data, receivedAt: Date) throws(OAuthError) {
            guard let fields = JSONFields(parsing: data) else {
                throw OAuthError(.transient, "the answer is not a JSON object")
            }
            func string(_ key: String) throws(OAuthError) -> String? {
                do throws(JSONFields.Mismatch) { return try fields.string(key) } catch {
                    throw OAuthError(.transient, "\(key) is not a string")
                }
            }
            guard let deviceCode = try string("device_code"), TokenSyntax.isRefreshToken(deviceCode) else {
                throw OAuthError(.transient, "it has no device_code of printable ASCII")
            }
            guard let userCode = try string("user_code"), !userCode.isEmpty,
                userCode.utf8.count <= Self.maximumUserCodeLength
            else {
                throw OAuthError(.transient, "it has no user_code of at most \(Self.maximumUserCodeLength) bytes")
            }
            func page(_ key: String) throws(OAuthError) -> URL? {
                guard let text = try string(key) else { return nil }
                guard text.utf8.count <= Self.maximumURILength, let url = URL(string: text), url.host != nil else {
                    throw OAuthError(.transient, "\(key) is not a URL of at most \(Self.maximumURILength) bytes")
                }
                guard EndpointSecurity.allows(url) else {
                    throw OAuthError(
                        .invalidConfiguration,
                        "\(key) \(TokenSyntax.bounded(url.redacted, to: 120)) is not https: the user would sign in over plain http"
                    )
                }
                return url
            }
            let verificationKey = fields.contains("verification_uri") ? "verification_uri" : "verification_url"
            guard let verificationURI = try page(verificationKey) else {
                throw OAuthError(.transient, "it has no verification_uri")
            }
            // A number that is absent or unreadable takes the default; only the bounds matter.
            let interval =
                ((try? fields.number("interval")) ?? nil).map { Self.clamp($0, to: Self.intervalBounds) } ?? 5
            let lifetime =
                ((try? fields.number("expires_in")) ?? nil).map { Self.clamp($0, to: Self.lifetimeBounds) } ?? 1800
            self.userCode = userCode
            self.verificationURI = verificationURI
            self.verificationURIComplete = try page("verification_uri_complete")
            self.expiresAt = receivedAt.addingTimeInterval(lifetime)
            self.interval = .milliseconds(Int64((interval * 1000).rounded()))
            self.deviceCode = deviceCode
        }

        private static func clamp(_ value: Double, to bounds: ClosedRange<TimeInterval>) -> TimeInterval {
            min(bounds.upperBound, max(bounds.lowerBound, value))
        }
    }

    /// What happens while the flow polls, for a progress display.
    public enum Event: Sendable, Equatable {
        /// The user has not answered yet; the next poll is in `nextPollIn`.
        case pending(nextPollIn: Duration)
        /// The server asked to poll more slowly; the interval is now `interval`.
        case slowDown(interval: Duration)
        /// The token endpoint could not be reached; polling goes on.
        case transientFailure(String)
    }

    /// Asks the device authorization endpoint for a user code.
    ///
    /// - Throws: ``OAuthError``: `invalidConfiguration` without a device authorization endpoint,
    ///   an authorization error when the server refuses the client or scopes, `transient` when
    ///   it cannot be reached or answers something unusable; `invalidConfiguration` for an endpoint
    ///   or verification page that is not https off loopback.
    public func start() async throws(OAuthError) -> Authorization {
        guard let endpoint = configuration.deviceAuthorizationEndpoint else {
            throw OAuthError(.invalidConfiguration, "the authorization server has no device authorization endpoint")
        }
        var parameters: [(String, String)] = []
        if !scopes.isEmpty { parameters.append(("scope", scopes.joined(separator: " "))) }
        // RFC 8628 section 3.1: a public client identifies itself with client_id; formRequest adds it.
        let request = OAuthHTTP.formRequest(to: endpoint, parameters: parameters, client: client)
        let response = try await OAuthHTTP.send(request, transport: transport, purpose: "device authorization")
        if response.statusCode >= 500 || response.statusCode == 429 {
            throw OAuthError(
                .transient,
                "the device authorization endpoint \(endpoint.redacted) answered HTTP \(response.statusCode)"
            )
        }
        guard response.statusCode == 200 else {
            if let error = OAuthErrorResponse(json: response.body) {
                throw OAuthError(
                    .authorization,
                    "the authorization server refused to start the device flow: \(error.summary)",
                    oauthErrorCode: error.code
                )
            }
            throw OAuthError(
                .transient,
                "the device authorization endpoint \(endpoint.redacted) answered HTTP \(response.statusCode)"
            )
        }
        do throws(OAuthError) {
            return try Authorization(parsing: response.body, receivedAt: Date())
        } catch {
            throw OAuthError(
                error.kind,
                "the device authorization endpoint \(endpoint.redacted) answered with an unusable response: \(error.message)"
            )
        }
    }

    /// Polls the token endpoint until the user approves, denies, or the codes expire.
    ///
    /// `authorization_pending` keeps polling; `slow_down` adds 5 s to the interval from then on
    /// (RFC 8628 section 3.5); failures to reach the token endpoint keep polling. A token answer
    /// that breaks the rules of a token response ends the flow (the device code is spent by
    /// then, so polling on could only fail). Cancelling the task stops it.
    ///
    /// - Returns: The new session's state.
    /// - Throws: ``OAuthError``: an authorization error with code `access_denied` or
    ///   `expired_token` (or another the server sent), `flowFailed` when cancelled, `transient`
    ///   for a token answer that breaks the rules of a token response.
    public func waitForApproval(
        of authorization: Authorization,
        onEvent: @Sendable (Event) -> Void = { _ in }
    ) async throws(OAuthError) -> AuthState {
        let endpoint = TokenEndpoint(configuration: configuration, client: client, transport: transport)
        var interval = authorization.interval
        while true {
            if Date() >= authorization.expiresAt {
                throw OAuthError(
                    .authorization,
                    "the user code \(authorization.userCode) expired before it was approved; start again",
                    oauthErrorCode: "expired_token"
                )
            }
            do {
                try await Task.sleep(for: interval)
            } catch {
                throw OAuthError(.flowFailed, "stopped waiting for the device sign-in (cancelled)")
            }
            do throws(OAuthError) {
                let response = try await endpoint.requestToken([
                    ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
                    ("device_code", authorization.deviceCode),
                ])
                var state = AuthState(
                    configuration: configuration,
                    client: client,
                    scopes: scopes,
                    grant: GrantRecord(type: .deviceCode)
                )
                state.apply(response, receivedAt: Date())
                return state
            } catch {
                switch (error.kind.wrapped, error.oauthErrorCode) {
                case (.authorization, "authorization_pending"):
                    onEvent(.pending(nextPollIn: interval))
                case (.authorization, "slow_down"):
                    interval += .seconds(5)
                    onEvent(.slowDown(interval: interval))
                case (.authorization, "access_denied"):
                    throw OAuthError(.authorization, "the sign-in was denied", oauthErrorCode: "access_denied")
                case (.authorization, "expired_token"):
                    throw OAuthError(
                        .authorization,
                        "the user code \(authorization.userCode) expired before it was approved; start again",
                        oauthErrorCode: "expired_token"
                    )
                case (.transient, _) where error.underlying is InvalidTokenResponse:
                    throw error
                case (.transient, _):
                    onEvent(.transientFailure(error.message))
                default:
                    throw error
                }
            }
        }
    }
}
