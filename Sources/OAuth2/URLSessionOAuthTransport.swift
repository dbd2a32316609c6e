import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends OAuth requests with `URLSession`: an ephemeral session (no cookies, no cache, no stored
/// credentials), so nothing of a token exchange is kept on disk by Foundation.
public struct URLSessionOAuthTransport: OAuthTransport {
    private let session: URLSession

    /// Creates a transport on its own ephemeral `URLSession`.
    public init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        session = URLSession(configuration: configuration)
    }

    /// Creates a transport on `session`.
    public init(session: URLSession) {
        self.session = session
    }

    public func send(_ request: OAuthHTTPRequest) async throws -> OAuthHTTPResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        urlRequest.httpBody = request.body
        let (seconds, attoseconds) = request.timeout.components
        urlRequest.timeoutInterval = Double(seconds) + Double(attoseconds) / 1e18
        for (name, value) in request.headers {
            urlRequest.addValue(value, forHTTPHeaderField: name)
        }
        let (body, response) = try await session.data(for: urlRequest)
        guard let http = response as? HTTPURLResponse else {
            throw URLError(.badServerResponse)
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String {
                headers[name.lowercased()] = value
            }
        }
        return OAuthHTTPResponse(statusCode: http.statusCode, headers: headers, body: body)
    }
}
