import AuthRPC
import AuthRPCSystem
import AuthSampleService
import Foundation
import GoogleAuth
import OAuth2
import OAuth2TestSupport
import TestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The sandbox's Google side: the service-account key it wrote, fresh accounts and users on
/// request, the metadata-server emulator, the grpcio service that says who called, and
/// google-auth (through `google_auth_check.py`) as the reference.
struct GoogleSandbox: Sendable {
    let sandbox: SandboxInfo

    /// The shared sandbox.
    static func shared() async throws -> GoogleSandbox {
        GoogleSandbox(sandbox: try await Peers.sandbox())
    }

    var issuer: URL { URL(string: sandbox.issuer)! }
    var tokenEndpoint: URL { URL(string: sandbox.process.string("token_endpoint"))! }
    var serviceAccountKeyPath: String { sandbox.process.string("service_account_key") }
    var serviceAccountEmail: String { sandbox.process.string("service_account_email") }
    var serviceAccountCertificatePath: String { sandbox.process.string("service_account_cert") }
    var authorizedUserPath: String { sandbox.process.string("authorized_user_file") }
    var quotaProjectID: String { sandbox.process.string("quota_project_id") }
    var metadataHost: String { sandbox.process.string("metadata_host") }
    var metadataEmail: String { sandbox.process.string("metadata_email") }

    /// A new service account's key file (Google's JSON), so counters concern one test only.
    func newServiceAccountKey(tokenLifetime: Int? = nil) async throws -> Data {
        var body: [String: Int] = [:]
        if let tokenLifetime { body["token_lifetime"] = tokenLifetime }
        return try await post(issuer.appendingPathComponent("sandbox/service-accounts"), json: body)
    }

    /// A new authorized_user document (gcloud's format) with a client of its own.
    func newAuthorizedUser(quotaProjectID: String? = nil, tokenLifetime: Int? = nil) async throws -> Data {
        var body: [String: any Sendable] = [:]
        if let quotaProjectID { body["quota_project_id"] = quotaProjectID }
        if let tokenLifetime { body["token_lifetime"] = tokenLifetime }
        return try await post(issuer.appendingPathComponent("sandbox/authorized-users"), json: body)
    }

    /// From now on, the access tokens of `clientID` (an OAuth client, a service account's email,
    /// the metadata account) live `seconds`.
    func setTokenLifetime(of clientID: String, seconds: Int) async throws {
        try await postForm(
            issuer.appendingPathComponent("sandbox/token-lifetime"),
            ["client_id": clientID, "token_lifetime": "\(seconds)"]
        )
    }

    /// Makes the token endpoint answer `clientID`'s requests with HTTP `status` (and
    /// `temporarily_unavailable`); 0 restores normal answers.
    func tokenBehaviour(of clientID: String, status: Int) async throws {
        try await postForm(
            issuer.appendingPathComponent("sandbox/token-behaviour"),
            ["client_id": clientID, "delay_ms": "0", "status": "\(status)"]
        )
    }

    /// The PEM certificate of a service account's key, as the issuer publishes it (Google's form).
    func certificate(of email: String, keyID: String) async throws -> String {
        let url = issuer.appendingPathComponent("robot/v1/metadata/x509/\(email)")
        let (data, _) = try await URLSession.shared.data(from: url)
        guard let pem = (try JSONSerialization.jsonObject(with: data) as? [String: String])?[keyID] else {
            throw PeerError("no certificate for \(email)")
        }
        return pem
    }

    /// Revokes the access tokens of `clientID` at the issuer (refresh tokens and keys still work):
    /// the next call with one is UNAUTHENTICATED.
    func expireAccessTokens(of clientID: String) async throws {
        try await postForm(issuer.appendingPathComponent("sandbox/expire-access-tokens"), ["client_id": clientID])
    }

    /// The issuer's counters for a client id or a service account's email.
    func issuerCounters(of clientID: String) async throws -> [String: Int] {
        let url = issuer.appendingPathComponent("sandbox/stats").appending(queryItems: [
            URLQueryItem(name: "client_id", value: clientID)
        ])
        let (data, _) = try await URLSession.shared.data(from: url)
        return (try JSONSerialization.jsonObject(with: data) as? [String: Int]) ?? [:]
    }

    /// Revokes every token of an issuer client (an authorized user's).
    func revokeEverything(of clientID: String) async throws {
        try await postForm(issuer.appendingPathComponent("sandbox/revoke-all"), ["client_id": clientID])
    }

    /// The metadata emulator's counters (`token_requests`, `requests_without_flavor`).
    func metadataCounters() async throws -> [String: Int] {
        let (data, _) = try await URLSession.shared.data(from: URL(string: "http://\(metadataHost)/sandbox/stats")!)
        return (try JSONSerialization.jsonObject(with: data) as? [String: Int]) ?? [:]
    }

    /// Turns a metadata emulator knob (`omit-flavor`, `fail-tokens`).
    func metadataKnob(_ name: String, _ body: [String: any Sendable]) async throws {
        _ = try await post(URL(string: "http://\(metadataHost)/sandbox/\(name)")!, json: body)
    }

    var iamEndpoint: String { sandbox.process.string("iam_endpoint") }
    var impersonationTarget: String { sandbox.process.string("impersonation_target") }
    var impersonationDelegate: String { sandbox.process.string("impersonation_delegate") }
    var impersonationForbidden: String { sandbox.process.string("impersonation_forbidden") }
    var impersonatedADCFile: String { sandbox.process.string("impersonated_adc_file") }
    var idTokenAudience: String { sandbox.process.string("id_token_audience") }
    var idTokenPublicKeyPath: String { sandbox.process.string("id_token_public_key") }

    /// The IAM emulator's URL of `method` for `email`.
    func iamURL(_ email: String, _ method: String) -> URL {
        URL(string: "\(iamEndpoint)/v1/projects/-/serviceAccounts/\(email):\(method)")!
    }

    /// What the IAM emulator received, oldest first: `method`, `path`, `content_type`, `caller`, `body`.
    func iamRequests() async throws -> [[String: Any]] {
        let (data, _) = try await URLSession.shared.data(from: URL(string: "\(iamEndpoint)/sandbox/requests")!)
        return (try JSONSerialization.jsonObject(with: data) as? [[String: Any]]) ?? []
    }

    /// The query of each identity request the metadata emulator received, oldest first.
    func metadataIdentityRequests() async throws -> [[String: [String]]] {
        let url = URL(string: "http://\(metadataHost)/sandbox/identity-requests")!
        let (data, _) = try await URLSession.shared.data(from: url)
        return (try JSONSerialization.jsonObject(with: data) as? [[String: [String]]]) ?? []
    }

    /// A TLS channel to the grpcio test service by its DNS name, trusting the sandbox CA.
    func channel() throws -> Channel {
        try Channel(
            target: "localhost:\(sandbox.tlsPort)",
            transportSecurity: .tls(TLSConfiguration(trustRoots: .certificates(pem: sandbox.caCertificatePEM)))
        )
    }

    /// The `:authority` of calls on ``channel()``.
    var authority: String { "localhost:\(sandbox.tlsPort)" }

    /// Calls UnaryCall asking who the server thinks called, and with which scope.
    func whoAmI(_ options: CallOptions, on channel: Channel? = nil) async throws -> (user: String, scope: String) {
        var request = AuthSample_Request()
        request.fillUsername = true
        request.fillOauthScope = true
        var options = options
        options.timeout = options.timeout ?? .seconds(20)
        let channel = try channel ?? self.channel()
        let response = try await AuthSample_TestServiceClient(channel: channel).unaryCall(request, options: options)
            .message
        return (response.username, response.oauthScope)
    }

    /// Calls with a fixed access token.
    func whoAmI(token: String) async throws -> (user: String, scope: String) {
        try await whoAmI(CallOptions(credentials: .accessToken(token)))
    }

    /// Calls UnaryCall with `provider` as the token provider, asking who called; the response
    /// (its trailers name the quota project received, `x-sandbox-user-project`).
    func call(
        _ provider: any AuthTokenProvider,
        authority: String? = nil,
        metadata: Metadata = [:],
        on existing: Channel? = nil
    ) async throws(RPCError) -> UnaryResponse<AuthSample_Response> {
        var request = AuthSample_Request()
        request.fillUsername = true
        request.fillOauthScope = true
        var options = CallOptions(
            timeout: .seconds(60),
            credentials: .provider(provider),
            initialMetadata: metadata,
            authority: authority
        )
        options.initialMetadata.addString("1", forKey: "x-sandbox-echo-headers")
        let channel: Channel
        if let existing {
            channel = existing
        } else {
            do { channel = try self.channel() } catch { throw RPCError(code: .internalError, message: "\(error)") }
        }
        return try await AuthSample_TestServiceClient(channel: channel).unaryCall(request, options: options)
    }

    /// `count` calls at once through `provider` on one channel; the users the server saw.
    func concurrentCalls(
        _ count: Int,
        _ provider: any AuthTokenProvider,
        authority: @escaping @Sendable (Int) -> String? = { _ in nil }
    ) async throws -> [String] {
        let channel = try self.channel()
        defer { channel.close() }
        return try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<count {
                group.addTask {
                    try await self.call(provider, authority: authority(index), on: channel).message.username
                }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
    }
    private func postForm(_ url: URL, _ form: [String: String]) async throws {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(
            form.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)" }
                .joined(separator: "&").utf8
        )
        let (data, response) = try await URLSession.shared.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            throw PeerError("\(url.path) answered \(String(decoding: data, as: UTF8.self))")
        }
    }

    private func post(_ url: URL, json: [String: any Sendable]) async throws -> Data {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: json)
        let (data, response) = try await URLSession.shared.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            throw PeerError("\(url.path) answered \(String(decoding: data, as: UTF8.self))")
        }
        return data
    }
}

/// `google_auth_check.py`: google-auth's opinion, in a child process with exactly the
/// environment given (plus PATH), run without holding a thread of the cooperative pool
/// (``ChildProcess``): a blocking wait for Python starved other tests' tasks under `--parallel`.
enum GoogleAuthReference {
    /// What `google.auth.default()` finds in `environment`: `type` (nil for nothing), `principal`,
    /// `quota_project_id`, or `error`.
    static func resolveADC(environment: [String: String]) async throws -> [String: Any] {
        try await run(["adc"], environment: environment)
    }

    /// The universe google-auth reads for the credential `google.auth.default()` finds in
    /// `environment` (`type`, `universe_domain`; for Compute Engine it asks the metadata server),
    /// and with `impersonate` the IAM Credentials URL its impersonated credentials would POST to
    /// (`impersonation_url`: recorded, never sent).
    static func universe(environment: [String: String], impersonate: String? = nil) async throws -> [String: Any] {
        try await run(["universe"] + (impersonate.map { ["--impersonate", $0] } ?? []), environment: environment)
    }

    /// The header and claims of `token` once google-auth verified it against the certificate,
    /// checking `audience` when given.
    static func verifyJWT(
        _ token: String,
        certificatePath: String,
        audience: String?
    ) async throws -> [String: Any] {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("jwt-\(UUID().uuidString)")
        try Data(token.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var arguments = ["verify-jwt", "--cert", certificatePath, "--token-file", file.path]
        if let audience { arguments += ["--audience", audience] }
        return try await run(arguments, environment: [:])
    }

    /// google-auth's impersonated credentials get one access token from the IAM emulator.
    static func impersonate(
        iamEndpoint: String,
        sourceKey: String,
        target: String,
        delegates: [String],
        scope: String,
        lifetime: Int
    ) async throws -> [String: Any] {
        try await run(
            ["impersonate", "--iam-endpoint", iamEndpoint, "--source-key", sourceKey, "--target", target]
                + delegates.flatMap { ["--delegate", $0] } + ["--scope", scope, "--lifetime", "\(lifetime)"],
            environment: [:]
        )
    }

    /// google-auth's ID token for `audience` (`how`: `--key PATH`, `--metadata`, or
    /// `--impersonate EMAIL --iam-endpoint URL --source-key PATH`): its claims and expiry.
    static func idToken(
        audience: String,
        how: [String],
        environment: [String: String] = [:]
    ) async throws -> [String: Any] {
        try await run(["id-token", "--audience", audience] + how, environment: environment)
    }

    /// The self-signed JWT google-auth makes with the key file at `keyPath` for `audience`, decoded:
    /// `header` and `claims`.
    static func selfSignedJWT(keyPath: String, audience: String) async throws -> [String: Any] {
        try await run(["self-signed-jwt", "--key", keyPath, "--audience", audience], environment: [:])
    }

    /// The access token google-auth got for the external_account `file` in `environment`
    /// (refreshed with its own `identity_pool`, `pluggable` or `aws` credentials).
    static func externalAccountToken(
        file: String,
        scopes: [String],
        environment: [String: String]
    ) async throws -> String {
        let object = try await run(
            ["external-account", file] + scopes.flatMap { ["--scope", $0] },
            environment: environment
        )
        guard let token = object["token"] as? String, !token.isEmpty else {
            throw PeerError("google-auth got no token for \(file)")
        }
        return token
    }

    private static func run(_ arguments: [String], environment: [String: String]) async throws -> [String: Any] {
        var variables = environment
        variables["PATH"] = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let script = PackageRoot.url.appendingPathComponent("Examples/Sandbox/google_auth_check.py").path
        let result = try await ChildProcess.run(
            PackageRoot.python,
            [script] + arguments,
            environment: variables,
            timeout: .seconds(120)
        )
        guard result.status == 0 else {
            throw PeerError("google_auth_check.py \(arguments.first ?? "") failed (\(result.status)): \(result.stderr)")
        }
        guard let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
            throw PeerError("google_auth_check.py printed no JSON object")
        }
        return object
    }
}

/// A scratch directory, removed when the test's value goes away.
final class ScratchDirectory: Sendable {
    let url: URL
    var path: String { url.path }

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("google-auth-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// Writes `data` at `name` (intermediate directories created) and returns the path.
    @discardableResult
    func write(_ data: Data, to name: String) throws -> String {
        let file = url.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: file)
        return file.path
    }
}

/// The JSON object in a JWT's `part` (0: header, 1: claims), decoded without verifying.
func jwtPart(_ token: String, _ part: Int) -> [String: Any] {
    let segments = token.split(separator: ".", omittingEmptySubsequences: false)
    guard segments.count == 3 else { return [:] }
    var base64 = segments[part].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while base64.count % 4 != 0 { base64 += "=" }
    guard let data = Data(base64Encoded: base64) else { return [:] }
    return (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
}

extension Data {
    /// This JSON object with `changes` applied (`nil` removes a key).
    func editingJSON(_ changes: [String: (any Sendable)?]) throws -> Data {
        var object = try JSONSerialization.jsonObject(with: self) as! [String: Any]
        for (key, value) in changes { object[key] = value }
        return try JSONSerialization.data(withJSONObject: object)
    }

    /// A string field of this JSON object.
    func jsonString(_ key: String) -> String {
        ((try? JSONSerialization.jsonObject(with: self) as? [String: Any])?[key] as? String) ?? ""
    }
}
