import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Sends OAuth requests with `URLSession`, on an ephemeral configuration (no cookies, no cache,
/// no stored credentials) so nothing of a token exchange is kept on disk by Foundation.
///
/// Each request runs on a session of its own whose delegate keeps the rules of
/// ``OAuthTransport``: redirects are never followed (the 3xx answer is returned), the answer fails
/// as soon as its announced `Content-Length` or the body read so far passes
/// ``OAuthHTTPRequest/maximumResponseBodySize`` (bytes past the limit are never kept), and as soon
/// as the whole answer has not arrived within ``OAuthHTTPRequest/timeout``. The transfer is then
/// cancelled in the background. (On Linux, FoundationNetworking reads ahead of its delegate and
/// acts on a cancellation late, so the socket may still take in some megabytes before it is
/// closed; none of them are kept, and the caller does not wait for them.)
public struct URLSessionOAuthTransport: OAuthTransport {
    private let configuration: URLSessionConfiguration

    /// Creates a transport on an ephemeral configuration without cookies or cache.
    public init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        self.configuration = configuration
    }

    /// Creates a transport whose sessions use `configuration` (a proxy, other headers…). Its
    /// cookie storage and cache are whatever `configuration` says.
    public init(configuration: URLSessionConfiguration) {
        self.configuration = configuration.copy() as! URLSessionConfiguration
    }

    public func send(_ request: OAuthHTTPRequest) async throws -> OAuthHTTPResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        urlRequest.httpBody = request.body
        // URLSession's own timeout is an idle timeout; the total one is enforced below.
        urlRequest.timeoutInterval = request.timeout.seconds
        for (name, value) in request.headers {
            urlRequest.addValue(value, forHTTPHeaderField: name)
        }

        let exchange = Exchange(limit: request.maximumResponseBodySize)
        let session = URLSession(configuration: configuration, delegate: TransportDelegate(exchange), delegateQueue: nil)
        let task = session.dataTask(with: urlRequest)
        let timeout = request.timeout
        let timer = Task {
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            exchange.finish(.failure(OAuthTransportError.timedOut(timeout)))
        }
        defer {
            timer.cancel()
            // Cancels the transfer if it is still running and releases the delegate; off the
            // caller's thread, since FoundationNetworking may block while it cancels.
            DispatchQueue.global().async { session.invalidateAndCancel() }
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                exchange.wait(continuation)
                task.resume()
            }
        } onCancel: {
            exchange.finish(.failure(CancellationError()))
        }
    }
}

/// One request's answer as it arrives, and the caller waiting for it. The first outcome wins:
/// the complete answer, an error from the session, or a broken rule (size, time, cancellation).
private final class Exchange: Sendable {
    private struct State {
        var continuation: CheckedContinuation<OAuthHTTPResponse, any Error>?
        var outcome: Result<OAuthHTTPResponse, any Error>?
        var isFinished = false
        var response: HTTPURLResponse?
        var body = Data()
    }

    private let limit: Int
    private let state = Mutex(State())

    init(limit: Int) {
        self.limit = limit
    }

    func wait(_ continuation: CheckedContinuation<OAuthHTTPResponse, any Error>) {
        let outcome: Result<OAuthHTTPResponse, any Error>? = state.withLock { state in
            if let outcome = state.outcome { return outcome }
            state.continuation = continuation
            return nil
        }
        if let outcome { continuation.resume(with: outcome) }
    }

    /// Ends the wait with `outcome`, unless it already ended.
    func finish(_ outcome: Result<OAuthHTTPResponse, any Error>) {
        let continuation: CheckedContinuation<OAuthHTTPResponse, any Error>? = state.withLock { state in
            guard !state.isFinished else { return nil }
            state.isFinished = true
            state.body = Data()
            guard let continuation = state.continuation else {
                state.outcome = outcome
                return nil
            }
            state.continuation = nil
            return continuation
        }
        continuation?.resume(with: outcome)
    }

    /// Takes the head in; `false` when the answer is over (an announced body over the limit ends it).
    func receive(_ response: HTTPURLResponse) -> Bool {
        let accepted = state.withLock { state in
            guard !state.isFinished, response.expectedContentLength <= Int64(limit) else { return false }
            state.response = response
            return true
        }
        if !accepted { finish(.failure(OAuthTransportError.responseTooLarge(limit: limit))) }
        return accepted
    }

    /// Takes body bytes in; `false` when the answer is over (a body past the limit ends it).
    func receive(_ data: Data) -> Bool {
        let accepted = state.withLock { state in
            guard !state.isFinished, state.body.count + data.count <= limit else { return false }
            state.body.append(data)
            return true
        }
        if !accepted { finish(.failure(OAuthTransportError.responseTooLarge(limit: limit))) }
        return accepted
    }

    /// The session's end of the task: the answer as received, or its error.
    func complete(error: (any Error)?) {
        let answer: Result<OAuthHTTPResponse, any Error> = state.withLock { state in
            if let error { return .failure(error) }
            guard let response = state.response else { return .failure(URLError(.badServerResponse)) }
            var headers: [String: String] = [:]
            for (name, value) in response.allHeaderFields {
                if let name = name as? String, let value = value as? String {
                    headers[name.lowercased()] = value
                }
            }
            return .success(OAuthHTTPResponse(statusCode: response.statusCode, headers: headers, body: state.body))
        }
        finish(answer)
    }
}

/// The delegate of one request's session.
private final class TransportDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let exchange: Exchange

    init(_ exchange: Exchange) {
        self.exchange = exchange
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        guard let http = response as? HTTPURLResponse, exchange.receive(http) else {
            if !(response is HTTPURLResponse) { exchange.finish(.failure(URLError(.badServerResponse))) }
            completionHandler(.cancel)
            return
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        _ = exchange.receive(data)
    }

    /// Never follows a redirect: the 3xx answer becomes the answer.
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        exchange.complete(error: error)
    }
}
