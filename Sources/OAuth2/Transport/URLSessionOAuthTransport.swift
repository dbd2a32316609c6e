import AuthRPCSystem
import Dispatch
import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// Sends OAuth requests with `URLSession`, on an ephemeral configuration (no cookies, no cache,
/// no stored credentials) so nothing of a token exchange is kept on disk by Foundation. An
/// alternative to the default ``HTTP1OAuthTransport``: it trusts what Foundation trusts (the
/// system's roots; on Linux, libcurl's bundle, not `SSL_CERT_FILE`) and follows Foundation's
/// proxy settings, not a channel's.
///
/// The transport's session has a delegate that keeps the rules of ``OAuthTransport``: redirects
/// are never followed (the 3xx answer is returned), the answer fails as soon as its announced
/// `Content-Length` or the body read so far passes ``OAuthHTTPRequest/maximumResponseBodySize``
/// (bytes past the limit are never kept), and as soon as the whole answer has not arrived within
/// ``OAuthHTTPRequest/timeout``. The transfer is then cancelled in the background. (On Linux,
/// FoundationNetworking reads ahead of its delegate and acts on a cancellation late, so the socket
/// may still take in some megabytes before it is closed; none of them are kept, and the caller
/// does not wait for them.)
///
/// Sessions live as long as the process: tearing a FoundationNetworking session down while its
/// sockets close is a known source of crashes on Linux, so it is never done. Transports made with
/// ``init()`` share one session; make a transport with ``init(configuration:)`` once and reuse it.
public struct URLSessionOAuthTransport: OAuthTransport {
    private let owner: SessionOwner

    /// Creates a transport on the session shared by every transport made this way: ephemeral,
    /// without cookies or cache.
    public init() {
        owner = .shared
    }

    /// Creates a transport on a session of its own with `configuration` (a proxy, other
    /// headers…). Its cookie storage and cache are whatever `configuration` says.
    public init(configuration: URLSessionConfiguration) {
        owner = SessionOwner(configuration: configuration)
    }

    /// Sends `request` and returns the answer, whatever its HTTP status; a redirect is returned as
    /// the 3xx answer it is, never followed.
    ///
    /// - Throws: ``OAuthTransportError/responseTooLarge(limit:)`` when the answer passes the
    ///   request's ``OAuthHTTPRequest/maximumResponseBodySize``,
    ///   ``OAuthTransportError/timedOut(_:)`` when it is not complete within its
    ///   ``OAuthHTTPRequest/timeout``, `CancellationError` when the task is cancelled, and
    ///   `URLSession`'s error when no answer came (no connection, TLS refused). The transfer is
    ///   cancelled in each case.
    public func send(_ request: OAuthHTTPRequest) async throws -> OAuthHTTPResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        urlRequest.httpBody = request.body
        // URLSession's own timeout is an idle timeout; the total one is enforced by the owner.
        urlRequest.timeoutInterval = request.timeout.seconds
        for (name, value) in request.headers {
            urlRequest.addValue(value, forHTTPHeaderField: name)
        }
        return try await owner.send(urlRequest, limit: request.maximumResponseBodySize, timeout: request.timeout)
    }
}

/// A `URLSession` and the delegate that routes each task's events to its ``Exchange``.
private final class SessionOwner: Sendable {
    static let shared: SessionOwner = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        return SessionOwner(configuration: configuration)
    }()

    private let session: URLSession
    private let delegate: TransportDelegate

    init(configuration: URLSessionConfiguration) {
        delegate = TransportDelegate()
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    func send(_ request: URLRequest, limit: Int, timeout: Duration) async throws -> OAuthHTTPResponse {
        let task = session.dataTask(with: request)
        let exchange = Exchange(limit: limit) {
            // FoundationNetworking's cancel waits for the session's queue: never on the caller's thread.
            DispatchQueue.global().async { task.cancel() }
        }
        delegate.register(exchange, for: task.taskIdentifier)
        let timer = Task {
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            exchange.finish(.failure(OAuthTransportError.timedOut(timeout)))
        }
        defer { timer.cancel() }
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
/// the complete answer, an error from the session, or a broken rule (size, time, cancellation),
/// which also cancels the transfer.
private final class Exchange: Sendable {
    private struct State {
        var continuation: CheckedContinuation<OAuthHTTPResponse, any Error>?
        var outcome: Result<OAuthHTTPResponse, any Error>?
        var isFinished = false
        var isCompleted = false
        var response: HTTPURLResponse?
        var body = Data()
    }

    private let limit: Int
    private let cancelTransfer: @Sendable () -> Void
    private let state = Locked(State())

    init(limit: Int, cancelTransfer: @escaping @Sendable () -> Void) {
        self.limit = limit
        self.cancelTransfer = cancelTransfer
    }

    func wait(_ continuation: CheckedContinuation<OAuthHTTPResponse, any Error>) {
        let outcome: Result<OAuthHTTPResponse, any Error>? = state.withLock { state in
            if let outcome = state.outcome { return outcome }
            state.continuation = continuation
            return nil
        }
        if let outcome { continuation.resume(with: outcome) }
    }

    /// Ends the wait with `outcome`, unless it already ended; cancels the transfer if the
    /// session has not completed it.
    func finish(_ outcome: Result<OAuthHTTPResponse, any Error>) {
        let (continuation, cancel): (CheckedContinuation<OAuthHTTPResponse, any Error>?, Bool) = state.withLock {
            state in
            guard !state.isFinished else { return (nil, false) }
            state.isFinished = true
            state.body = Data()
            let cancel = !state.isCompleted
            guard let continuation = state.continuation else {
                state.outcome = outcome
                return (nil, cancel)
            }
            state.continuation = nil
            return (continuation, cancel)
        }
        if cancel { cancelTransfer() }
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

    /// Takes body bytes in; a body past the limit ends the answer (bytes after the end are dropped).
    func receive(_ data: Data) {
        let overflow = state.withLock { state in
            guard !state.isFinished else { return false }
            guard state.body.count + data.count <= limit else { return true }
            state.body.append(data)
            return false
        }
        if overflow { finish(.failure(OAuthTransportError.responseTooLarge(limit: limit))) }
    }

    /// The session's end of the task: the answer as received, or its error.
    func complete(error: (any Error)?) {
        let answer: Result<OAuthHTTPResponse, any Error> = state.withLock { state in
            state.isCompleted = true
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

/// The session delegate: routes each task's events to its ``Exchange``.
private final class TransportDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let exchanges = Locked<[Int: Exchange]>([:])

    func register(_ exchange: Exchange, for taskIdentifier: Int) {
        exchanges.withLock { $0[taskIdentifier] = exchange }
    }

    private func exchange(for task: URLSessionTask) -> Exchange? {
        exchanges.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        guard let exchange = exchange(for: dataTask) else {
            completionHandler(.cancel)
            return
        }
        guard let http = response as? HTTPURLResponse else {
            exchange.finish(.failure(URLError(.badServerResponse)))
            completionHandler(.cancel)
            return
        }
        completionHandler(exchange.receive(http) ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        exchange(for: dataTask)?.receive(data)
    }

    /// Never follows a redirect: the 3xx answer becomes the answer.
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let exchange = exchanges.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        exchange?.complete(error: error)
    }
}
