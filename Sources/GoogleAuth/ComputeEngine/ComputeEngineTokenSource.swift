import Foundation
public import Logging
public import OAuth2

/// Access tokens for a Compute Engine instance's default service account, from the metadata
/// server: `GET http://<host>/computeMetadata/v1/instance/service-accounts/default/token`
/// (`?scopes=a,b` when scopes are given), with `Metadata-Flavor: Google`.
///
/// An answer without `Metadata-Flavor: Google` did not come from a metadata server (a proxy, a
/// captive portal, another service on the address) and is refused. The host is
/// `metadata.google.internal` unless given (``ApplicationDefaultCredentials`` uses
/// `GCE_METADATA_HOST`); the link-local address is never used by default. The requests are plain
/// http, as the metadata server serves only http: they carry no secret, and they may go only to
/// `metadata.google.internal`, `169.254.169.254` or exactly `host`. A request that fails in a way
/// that may pass (no answer, HTTP 408, 429, 500, 503, 504) is retried as ``retry`` says.
public struct ComputeEngineTokenSource: GoogleTokenSource {
    /// The metadata server's name on Compute Engine.
    public static let defaultHost = "metadata.google.internal"
    /// The header a metadata request and its answer carry.
    public static let flavorHeader = "Metadata-Flavor"
    /// Its value.
    public static let flavor = "Google"
    /// The largest answer read: a token answer is a few hundred bytes.
    static let maximumAnswerSize = 64 * 1024
    /// How long a metadata request may take: the server is on the local network or the host.
    static let requestTimeout: Duration = .seconds(10)

    /// `HOST` or `HOST:PORT` of the metadata server.
    public let host: String
    /// The scopes asked for; empty for the instance's own.
    public let scopes: [String]
    /// How failures that may pass are retried.
    public let retry: MetadataRetry

    private let transport: any OAuthTransport
    private let logger: Logger

    /// A source asking the metadata server at `host`, retrying as `retry` says
    /// (``MetadataRetry/standard``: five attempts within 30 s, as google-auth).
    ///
    /// - Throws: ``/OAuth2/OAuthError/Kind/invalidConfiguration`` when `host` is not `HOST[:PORT]`, or a
    ///   scope is empty or has a comma or space.
    public init(
        host: String = defaultHost,
        scopes: [String] = [],
        retry: MetadataRetry = .standard,
        transport: any OAuthTransport = HTTP1OAuthTransport.standard,
        logger: Logger = Logger(label: "swift-authrpc.google")
    ) throws(OAuthError) {
        guard ServiceHost.host(ofAuthority: host) != nil else {
            throw OAuthError(
                .invalidConfiguration,
                "the metadata server \"\(host.prefix(100))\" is not HOST or HOST:PORT"
            )
        }
        for scope in scopes where scope.isEmpty || scope.contains(where: { $0 == "," || $0 == " " || $0.isNewline }) {
            throw OAuthError(
                .invalidConfiguration,
                "scope \"\(scope.prefix(80))\" is empty or contains a comma or space"
            )
        }
        self.host = host
        self.scopes = scopes
        self.retry = retry
        self.transport = transport
        self.logger = logger
    }

    /// Asks the metadata server for a token.
    ///
    /// - Throws: ``/OAuth2/OAuthError``: ``/OAuth2/OAuthError/Kind/transient`` when the server cannot be reached,
    ///   answers 5xx/408/429, or answers 200 without a usable token; ``/OAuth2/OAuthError/Kind/invalidConfiguration``
    ///   when the answer lacks `Metadata-Flavor: Google` or says there is no such account (404)
    ///   or refuses (other 4xx).
    public func fetchToken() async throws(OAuthError) -> FetchedAccessToken {
        var path = "/computeMetadata/v1/instance/service-accounts/default/token"
        if !scopes.isEmpty {
            path += "?scopes=" + scopes.map { Self.percentEncoded($0) }.joined(separator: ",")
        }
        logger.debug("asking the metadata server for a token", metadata: ["host": "\(host)"])
        let response = try await get(path, purpose: "metadata token")
        return try GrantRequest.token(in: response.body, receivedAt: Date(), from: "the metadata server at \(host)")
    }

    /// The default service account's email, as the metadata server reports it.
    ///
    /// - Throws: ``/OAuth2/OAuthError`` as ``fetchToken()`` does.
    public func serviceAccountEmail() async throws(OAuthError) -> String {
        let response = try await get(
            "/computeMetadata/v1/instance/service-accounts/default/email",
            purpose: "metadata email"
        )
        let email = String(decoding: response.body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !email.isEmpty, email.count <= 256, email.contains("@"), !email.contains(where: { $0.isWhitespace })
        else {
            throw OAuthError(.transient, "the metadata server at \(host) answered without an email address")
        }
        return email
    }

    /// The universe the instance belongs to, as the metadata server says
    /// (`/computeMetadata/v1/universe/universe-domain`); `googleapis.com` when the server has no
    /// such entry (HTTP 404), as google-auth reads it. Asked afresh on each call;
    /// ``GoogleCredentials`` asks once, before its first token.
    ///
    /// - Throws: ``/OAuth2/OAuthError``: ``/OAuth2/OAuthError/Kind/invalidConfiguration`` when
    ///   the answer is not a domain name (empty, a URL, ...) or lacks `Metadata-Flavor: Google`;
    ///   otherwise as ``fetchToken()`` does.
    public func universeDomain() async throws(OAuthError) -> String {
        let path = "/computeMetadata/v1/universe/universe-domain"
        guard let response = try await get(path, purpose: "metadata universe domain", absentIfNotFound: true) else {
            return GoogleCredentialIdentity.defaultUniverseDomain
        }
        let text = String(decoding: response.body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return try UniverseDomain.validated(text, from: "the universe domain the metadata server at \(host) answered")
    }

    /// A flavoured GET of `path`, its answer checked: from a metadata server, 2xx, bounded;
    /// failures that may pass are retried as ``retry`` says.
    func get(_ path: String, purpose: String) async throws(OAuthError) -> OAuthHTTPResponse {
        // Only a request made with absentIfNotFound answers nil.
        try await get(path, purpose: purpose, absentIfNotFound: false)!
    }

    /// ``get(_:purpose:)``, answering `nil` for HTTP 404 when `absentIfNotFound`.
    private func get(
        _ path: String,
        purpose: String,
        absentIfNotFound: Bool
    ) async throws(OAuthError) -> OAuthHTTPResponse? {
        guard let url = URL(string: "http://\(host)\(path)") else {
            throw OAuthError(.invalidConfiguration, "cannot make a metadata URL for \(host)")
        }
        let clock = ContinuousClock()
        let start = clock.now
        var attempt = 1
        while true {
            let elapsed = clock.now - start
            let outcome = try await getOnce(
                url,
                purpose: purpose,
                timeout: retry.timeout(Self.requestTimeout, elapsed: elapsed),
                absentIfNotFound: absentIfNotFound
            )
            let failure: OAuthError
            switch outcome {
            case .answer(let response): return response
            case .absent: return nil
            case .mayPass(let error): failure = error
            }
            guard !Task.isCancelled,
                let wait = retry.wait(afterAttempt: attempt, elapsed: clock.now - start, jitter: .random(in: -1...1))
            else {
                guard attempt > 1 else { throw failure }
                throw OAuthError(
                    failure.kind,
                    "\(failure.message) (after \(attempt) attempts)",
                    underlying: failure
                )
            }
            logger.debug(
                "the metadata server did not answer; retrying",
                metadata: ["host": "\(host)", "attempt": "\(attempt)", "reason": "\(failure.message)"]
            )
            do {
                try await Task.sleep(for: wait)
            } catch {
                throw OAuthError(.transient, "\(failure.message) (the retry was cancelled)", underlying: failure)
            }
            attempt += 1
        }
    }

    /// What one request ended with, unless it failed for good (thrown).
    private enum Outcome {
        /// A 2xx answer from a metadata server.
        case answer(OAuthHTTPResponse)
        /// HTTP 404 from a metadata server, when the caller takes it as "no such entry".
        case absent
        /// No answer, or an answer worth asking again for.
        case mayPass(OAuthError)
    }

    private func getOnce(
        _ url: URL,
        purpose: String,
        timeout: Duration,
        absentIfNotFound: Bool
    ) async throws(OAuthError) -> Outcome {
        let request = OAuthHTTPRequest(
            url: url,
            method: "GET",
            headers: [(Self.flavorHeader, Self.flavor)],
            timeout: timeout
        )
        let response: OAuthHTTPResponse
        do {
            response = try await GrantRequest.send(
                request,
                transport: transport,
                purpose: purpose,
                plaintext: .metadataServers(MetadataServerHosts.computeEngine(configured: host))
            )
        } catch {
            // No answer (connecting failed, a timeout): worth another try, unless cancelled.
            guard error.isTransient, !(error.underlying is CancellationError), !Task.isCancelled else { throw error }
            return .mayPass(error)
        }
        let server = "the metadata server at \(host)"
        guard response.headers[Self.flavorHeader.lowercased()] == Self.flavor else {
            throw OAuthError(
                .invalidConfiguration,
                "\(server) answered HTTP \(response.statusCode) without \(Self.flavorHeader): \(Self.flavor); it is not a Compute Engine metadata server"
            )
        }
        guard response.body.count <= Self.maximumAnswerSize else {
            throw OAuthError(
                .transient,
                "\(server) answered with \(response.body.count) bytes; at most \(Self.maximumAnswerSize) are expected"
            )
        }
        switch response.statusCode {
        case 200..<300:
            return .answer(response)
        case let status where MetadataRetry.isRetryable(status: status):
            return .mayPass(OAuthError(.transient, "\(server) answered HTTP \(status); try again later"))
        case 500...:
            throw OAuthError(.transient, "\(server) answered HTTP \(response.statusCode); try again later")
        case 404 where absentIfNotFound:
            return .absent
        case 404:
            throw OAuthError(.invalidConfiguration, "\(server) has no default service account (HTTP 404)")
        default:
            throw OAuthError(
                .invalidConfiguration,
                "\(server) refused the \(purpose) request (HTTP \(response.statusCode))"
            )
        }
    }

    /// The instance's default account, until ``serviceAccountEmail()`` says which it is.
    public var identity: GoogleCredentialIdentity {
        GoogleCredentialIdentity(kind: .computeEngine, principal: "default", source: "metadata server at \(host)")
    }

    /// The host and the scopes.
    public var description: String {
        "ComputeEngineTokenSource(metadata server at \(host)\(scopes.isEmpty ? "" : ", scopes: \(scopes.joined(separator: " "))"))"
    }

    static func percentEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}

extension ComputeEngineTokenSource: UniverseDomainDiscovery {}
