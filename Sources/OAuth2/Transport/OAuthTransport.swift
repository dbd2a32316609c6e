public import Foundation

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
    /// How long to wait for the whole answer, from sending the request to the last body byte.
    public var timeout: Duration
    /// The largest answer body to read, in bytes. A transport stops reading past it (and
    /// refuses an announced `Content-Length` over it) by throwing
    /// ``OAuthTransportError/responseTooLarge(limit:)``; the library also checks every body it is
    /// handed against it.
    public var maximumResponseBodySize: Int
    /// The metadata servers this request may reach over plain http and never through a proxy:
    /// set by the library where it sends (``EndpointSecurity``), from what the caller named.
    package var plaintext = PlaintextAllowance.none

    /// The default body limit: 256 KiB. Token, device and error answers are a few KiB, discovery
    /// documents a few tens at most; an answer larger than this is not one of them.
    public static let defaultMaximumResponseBodySize = 256 * 1024

    /// Creates a request.
    public init(
        url: URL,
        method: String = "GET",
        headers: [(name: String, value: String)] = [],
        body: Data? = nil,
        timeout: Duration = .seconds(30),
        maximumResponseBodySize: Int = OAuthHTTPRequest.defaultMaximumResponseBodySize
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.maximumResponseBodySize = maximumResponseBodySize
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

/// Why a transport stopped reading an answer. Custom ``OAuthTransport``s throw these so the
/// library can say what happened.
public enum OAuthTransportError: Error, Sendable, CustomStringConvertible {
    /// The body (as announced, or as read so far) is larger than the request's
    /// ``OAuthHTTPRequest/maximumResponseBodySize``.
    case responseTooLarge(limit: Int)
    /// The whole answer did not arrive within the request's ``OAuthHTTPRequest/timeout``.
    case timedOut(Duration)

    /// What was exceeded, with the limit or the timeout.
    public var description: String {
        switch self {
        case .responseTooLarge(let limit): return "the answer is larger than \(limit) bytes"
        case .timedOut(let timeout): return "no complete answer within \(timeout)"
        }
    }
}

/// How OAuth requests reach the authorization server. ``HTTP1OAuthTransport/standard`` is the
/// default (the package's own HTTP/1.1 client, trusting the system's roots and following the
/// environment's proxy settings, as channels do); make an ``HTTP1OAuthTransport`` to trust a
/// private CA or name a proxy, use ``URLSessionOAuthTransport`` for Foundation's client, or supply
/// your own (a recorder, another HTTP client).
///
/// Implementations throw for failures below HTTP (no connection, timeout); every HTTP answer,
/// whatever its status, is returned. They must not follow redirects (return the 3xx answer
/// instead: a redirected token request would carry its secrets to wherever the server points),
/// should stop reading a body past ``OAuthHTTPRequest/maximumResponseBodySize`` with
/// ``OAuthTransportError/responseTooLarge(limit:)``, and should give up after
/// ``OAuthHTTPRequest/timeout`` with ``OAuthTransportError/timedOut(_:)``.
public protocol OAuthTransport: Sendable {
    /// Sends `request` and returns the server's answer.
    func send(_ request: OAuthHTTPRequest) async throws -> OAuthHTTPResponse
}
