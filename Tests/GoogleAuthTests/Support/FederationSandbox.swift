import Foundation
import GoogleAuth
import TestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The sandbox's federation peers: the OIDC provider (with its GitHub-Actions-style token URL),
/// the Security Token Service emulator and the AWS emulator, and a pool of the test's own so
/// that the emulator's records concern one test only.
struct FederationSandbox: Sendable {
    let google: GoogleSandbox
    let pool: String

    init(google: GoogleSandbox) {
        self.google = google
        pool = "p" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
    }

    static func make() async throws -> FederationSandbox {
        FederationSandbox(google: try await GoogleSandbox.shared())
    }

    private var process: PeerProcess { google.sandbox.process }
    var stsTokenURL: String { process.string("sts_token_url") }
    var stsURL: URL { URL(string: process.string("sts_url"))! }
    var oidcIssuer: URL { URL(string: process.string("oidc_issuer"))! }
    var actionsRequestURL: String { process.string("actions_id_token_request_url") }
    var actionsRequestToken: String { process.string("actions_id_token_request_token") }
    var awsURL: String { process.string("aws_url") }
    var awsRegion: String { process.string("aws_region") }
    var projectNumber: String { process.string("sts_project_number") }

    /// A workload identity pool provider's audience in this test's pool (`aws...` providers are
    /// AWS providers, any other an OIDC one).
    func audience(provider: String = "github") -> String {
        "//iam.googleapis.com/projects/\(projectNumber)/locations/global/workloadIdentityPools/\(pool)/providers/\(provider)"
    }

    /// The principal the gRPC service sees for `subject` in this pool.
    func principal(subject: String) -> String {
        "principal://iam.googleapis.com/projects/\(projectNumber)/locations/global/workloadIdentityPools/\(pool)/subject/\(subject)"
    }

    /// An OIDC token of the sandbox's provider for `audience` (`aud` is `https:` + it).
    func mint(
        subject: String = "repo:octo-org/octo-repo:ref:refs/heads/main",
        audience: String,
        expired: Bool = false
    )
        async throws -> String
    {
        let data = try await post(
            oidcIssuer.appendingPathComponent("sandbox/mint"),
            ["sub": subject, "audience": "https:" + audience, "expired": expired]
        )
        guard let token = (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["token"] as? String else {
            throw PeerError("the OIDC provider minted no token")
        }
        return token
    }

    /// Every exchange the emulator received for `audience`: `form`, `authorization`, `subject`.
    func exchanges(for audience: String) async throws -> [[String: Any]] {
        var components = URLComponents(
            url: stsURL.appendingPathComponent("sandbox/requests"),
            resolvingAgainstBaseURL: false
        )!
        components.queryItems = [URLQueryItem(name: "audience", value: audience)]
        let (data, _) = try await URLSession.shared.data(from: components.url!)
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["requests"] as? [[String: Any]] ?? []
    }

    /// New AWS keys of the emulator: `access_key_id`, `secret_access_key` (and `session_token`).
    func awsKeys(temporary: Bool = false) async throws -> [String: String] {
        let data = try await post(URL(string: awsURL + "/sandbox/keys")!, ["temporary": temporary])
        return try JSONSerialization.jsonObject(with: data) as! [String: String]
    }

    /// The metadata requests the AWS emulator received: `method`, `path`, `headers`.
    func awsMetadataRequests() async throws -> [[String: Any]] {
        let (data, _) = try await URLSession.shared.data(from: URL(string: awsURL + "/sandbox/requests")!)
        let object = try JSONSerialization.jsonObject(with: data)
        return (object as? [[String: Any]]) ?? ((object as? [String: Any])?["requests"] as? [[String: Any]]) ?? []
    }

    /// Makes the OIDC provider's `source` (`github`, `azure`) misbehave: `redirect`, `trickle`,
    /// `huge`, `status`, or `normal`.
    func oidcBehaviour(_ source: String, _ mode: String) async throws {
        _ = try await post(oidcIssuer.appendingPathComponent("sandbox/behaviour"), ["source": source, "mode": mode])
    }

    /// Makes the STS emulator fail `audience`'s exchanges with HTTP `status` (0: normal again).
    func stsBehaviour(audience: String, status: Int) async throws {
        _ = try await post(
            stsURL.appendingPathComponent("sandbox/behaviour"),
            ["audience": audience, "status": status]
        )
    }

    var iamURL: String { process.string("iam_endpoint") }
    var impersonationTarget: String { process.string("impersonation_target") }

    /// The generateAccessToken URL of `email` at the IAM Credentials emulator.
    func impersonationURL(of email: String) -> String {
        "\(iamURL)/v1/projects/-/serviceAccounts/\(email):generateAccessToken"
    }

    /// Lets `principal` impersonate `target` at the IAM Credentials emulator.
    func allowImpersonation(of target: String, by principal: String) async throws {
        _ = try await post(URL(string: iamURL + "/sandbox/allow")!, ["target": target, "principal": principal])
    }

    /// The requests the IAM Credentials emulator recorded: `method`, `path`, `caller`, `body`.
    func iamRequests() async throws -> [[String: Any]] {
        let (data, _) = try await URLSession.shared.data(from: URL(string: iamURL + "/sandbox/requests")!)
        return (try JSONSerialization.jsonObject(with: data) as? [[String: Any]]) ?? []
    }

    /// A new client of the STS emulator: `client_id`, `client_secret`.
    func newClient() async throws -> [String: String] {
        let data = try await post(stsURL.appendingPathComponent("sandbox/clients"), [:])
        return try JSONSerialization.jsonObject(with: data) as! [String: String]
    }

    /// A new workforce pool user's external_account_authorized_user document.
    func newWorkforceUser(quotaProjectID: String? = nil) async throws -> Data {
        var body: [String: any Sendable] = [:]
        if let quotaProjectID { body["quota_project_id"] = quotaProjectID }
        return try await post(stsURL.appendingPathComponent("sandbox/workforce-users"), body)
    }

    /// An external_account file's JSON.
    func credentialFile(
        audience: String,
        subjectTokenType: String = "urn:ietf:params:oauth:token-type:jwt",
        source: [String: any Sendable],
        extra: [String: any Sendable] = [:]
    ) throws -> Data {
        var object: [String: Any] = [
            "type": "external_account", "audience": audience, "subject_token_type": subjectTokenType,
            "token_url": stsTokenURL, "credential_source": source,
        ]
        for (key, value) in extra { object[key] = value }
        return try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }

    private func post(_ url: URL, _ json: [String: any Sendable]) async throws -> Data {
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
