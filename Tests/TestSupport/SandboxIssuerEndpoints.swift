public import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the sandbox's Authlib issuer answered one of its endpoints with.
public struct SandboxIssuerAnswer {
    /// The HTTP status.
    public var status: Int
    /// The answer as a JSON object (empty when it is not one).
    public var body: [String: Any]
    /// The answer's bytes as text, for a failure's message.
    public var text: String
}

/// The sandbox issuer's HTTP endpoints, its test-only ones (`sandbox/...`) included: the one
/// driver OAuth2's and the CLI's tests reach it through.
public struct SandboxIssuerEndpoints: Sendable {
    /// The issuer's URL.
    public let url: URL

    /// The issuer at `url`.
    public init(url: URL) {
        self.url = url
    }

    /// POSTs `form` (each value percent-encoded but for letters and digits) to `path`.
    public func post(_ path: String, form: [String: String]) async throws -> SandboxIssuerAnswer {
        var request = URLRequest(url: url.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(
            form.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }
                .joined(separator: "&").utf8
        )
        return try await send(request)
    }

    /// POSTs `json` to `path`.
    public func post(_ path: String, json: [String: any Sendable]) async throws -> SandboxIssuerAnswer {
        var request = URLRequest(url: url.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: json)
        return try await send(request)
    }

    /// The issuer's counters for `clientID` (`token_requests`, `refresh_requests`, `device_polls`, …).
    public func counters(of clientID: String) async throws -> [String: Int] {
        let data = try await get("sandbox/stats", clientID: clientID)
        return (try JSONSerialization.jsonObject(with: data) as? [String: Int]) ?? [:]
    }

    /// Every access token the issuer gave `clientID` (an OAuth client, a service account's
    /// email, the metadata emulator's account).
    public func accessTokens(of clientID: String) async throws -> [String] {
        let data = try await get("sandbox/access-tokens", clientID: clientID)
        return ((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["access_tokens"] as? [String]) ?? []
    }

    /// Revokes every token of the client behind its sessions' back.
    public func revokeEverything(of clientID: String) async throws {
        let answer = try await post("sandbox/revoke-all", form: ["client_id": clientID])
        guard answer.status == 200 else { throw PeerError("sandbox/revoke-all answered \(answer.status)") }
    }

    private func get(_ path: String, clientID: String) async throws -> Data {
        var components = URLComponents(url: url.appendingPathComponent(path), resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "client_id", value: clientID)]
        let (data, _) = try await URLSession.shared.data(from: components.url!)
        return data
    }

    private func send(_ request: URLRequest) async throws -> SandboxIssuerAnswer {
        let (data, response) = try await URLSession.shared.data(for: request)
        return SandboxIssuerAnswer(
            status: (response as? HTTPURLResponse)?.statusCode ?? 0,
            body: (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:],
            text: String(decoding: data, as: UTF8.self)
        )
    }
}
