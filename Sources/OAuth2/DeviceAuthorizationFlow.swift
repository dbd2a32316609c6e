import Foundation

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
    public init(configuration: ServiceConfiguration, client: OAuthClient, scopes: [String], transport: any OAuthTransport = URLSessionOAuthTransport()) {
        self.configuration = configuration
        self.client = client
        self.scopes = scopes
        self.transport = transport
    }

    /// What to show the user, and what the flow needs to poll.
    public struct Authorization: Sendable, CustomStringConvertible {
        /// The code the user types.
        public let userCode: String
        /// Where the user goes.
        public let verificationURI: URL
        /// The same page with the code filled in, when the server offers one.
        public let verificationURIComplete: URL?
        /// When the codes stop working.
        public let expiresAt: Date
        /// The polling interval the server asked for at the start (at least one second).
        public let interval: Duration
        /// The secret the flow polls with. Never printed.
        let deviceCode: String

        /// The user code and URL; never the device code.
        public var description: String {
            "DeviceAuthorization(userCode: \(userCode), verificationURI: \(verificationURI), expiresAt: \(expiresAt))"
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
    ///   it cannot be reached or answers something unusable.
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
            throw OAuthError(.transient, "the device authorization endpoint \(endpoint.redacted) answered HTTP \(response.statusCode)")
        }
        guard response.statusCode == 200 else {
            if let error = OAuthErrorResponse(json: response.body) {
                throw OAuthError(.authorization(code: error.code), "the authorization server refused to start the device flow: \(error.summary)")
            }
            throw OAuthError(.transient, "the device authorization endpoint \(endpoint.redacted) answered HTTP \(response.statusCode)")
        }
        guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
              let deviceCode = object["device_code"] as? String, let userCode = object["user_code"] as? String,
              // Google names it verification_url.
              let uriText = (object["verification_uri"] ?? object["verification_url"]) as? String,
              let verificationURI = URL(string: uriText) else {
            throw OAuthError(.transient, "the device authorization endpoint \(endpoint.redacted) answered without device_code, user_code and verification_uri")
        }
        let expiresIn = jsonNumber(object["expires_in"]) ?? 1800
        let interval = jsonNumber(object["interval"]) ?? 5
        return Authorization(
            userCode: userCode,
            verificationURI: verificationURI,
            verificationURIComplete: (object["verification_uri_complete"] as? String).flatMap(URL.init(string:)),
            expiresAt: Date().addingTimeInterval(expiresIn),
            // At least a second between polls, whatever the server says: never a tight loop.
            interval: .milliseconds(Int64(max(1, interval) * 1000)),
            deviceCode: deviceCode)
    }

    /// Polls the token endpoint until the user approves, denies, or the codes expire.
    ///
    /// `authorization_pending` keeps polling; `slow_down` adds 5 s to the interval from then on
    /// (RFC 8628 section 3.5); transient failures keep polling. Cancelling the task stops it.
    ///
    /// - Returns: The new session's state.
    /// - Throws: ``OAuthError``: an authorization error with code `access_denied` or
    ///   `expired_token` (or another the server sent), `flowFailed` when cancelled.
    public func waitForApproval(of authorization: Authorization, onEvent: @Sendable (Event) -> Void = { _ in }) async throws(OAuthError) -> AuthState {
        let endpoint = TokenEndpoint(configuration: configuration, client: client, transport: transport)
        var interval = authorization.interval
        while true {
            if Date() >= authorization.expiresAt {
                throw OAuthError(.authorization(code: "expired_token"), "the user code \(authorization.userCode) expired before it was approved; start again")
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
                var state = AuthState(configuration: configuration, client: client, scopes: scopes, grant: GrantRecord(type: .deviceCode))
                state.apply(response, receivedAt: Date())
                return state
            } catch {
                switch error.kind {
                case .authorization(code: "authorization_pending"):
                    onEvent(.pending(nextPollIn: interval))
                case .authorization(code: "slow_down"):
                    interval += .seconds(5)
                    onEvent(.slowDown(interval: interval))
                case .authorization(code: "access_denied"):
                    throw OAuthError(.authorization(code: "access_denied"), "the sign-in was denied")
                case .authorization(code: "expired_token"):
                    throw OAuthError(.authorization(code: "expired_token"), "the user code \(authorization.userCode) expired before it was approved; start again")
                case .transient:
                    onEvent(.transientFailure(error.message))
                default:
                    throw error
                }
            }
        }
    }
}
