import Foundation

/// An HTTP request to an authorization server (token, device, revocation, discovery endpoints).
public struct OAuthHTTPRequest: Sendable {
    /// The URL.
    public var url: URL
    /// `GET` or `POST`.
    public var method: String
    /// Header fields, in order.
    public var headers: [(name: String, value: String)]
    /// The body, for `POST`.
    public var body: Data?
    /// How long to wait for the whole answer.
    public var timeout: Duration

    /// Creates a request.
    public init(url: URL, method: String = "GET", headers: [(name: String, value: String)] = [], body: Data? = nil, timeout: Duration = .seconds(30)) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

/// An authorization server's answer.
public struct OAuthHTTPResponse: Sendable {
    /// The HTTP status code.
    public var statusCode: Int
    /// Header fields; names lowercased.
    public var headers: [String: String]
    /// The body.
    public var body: Data

    /// Creates a response.
    public init(statusCode: Int, headers: [String: String] = [:], body: Data) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
    }
}

/// How OAuth requests reach the authorization server. ``URLSessionOAuthTransport`` is the default;
/// supply another to route requests through a proxy, an HTTP client of your own, or a recorder.
///
/// Implementations throw for failures below HTTP (no connection, timeout); every HTTP answer,
/// whatever its status, is returned.
public protocol OAuthTransport: Sendable {
    /// Sends `request` and returns the server's answer.
    func send(_ request: OAuthHTTPRequest) async throws -> OAuthHTTPResponse
}
