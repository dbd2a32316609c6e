import Foundation
import OAuth2
import TestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The scriptable hostile OAuth peer (`Tests/Peers/oauth_hostile_server.py`): an HTTP/1.1 server
/// on loopback that answers exactly what a test scripted, and counts what it saw and sent.
struct HostilePeer: Sendable {
    let process: PeerProcess
    var url: URL { URL(string: process.string("url"))! }

    /// One registered answer: every request to ``url`` (or below it) gets it.
    struct Script: Sendable {
        let id: String
        let url: URL
    }

    /// What the peer saw for one script.
    struct Stats: Sendable {
        var hits: Int
        var bytesSent: Int
        var completed: Int
        var aborted: Int
        /// The form keys of each request (never the values).
        var formKeys: [[String]]
        /// Each request's method and header names (never the values), in order.
        var requests: [Request]

        struct Request: Sendable {
            var method: String
            var headerNames: [String]
        }
    }

    /// The peer shared by every test of this process (started on first use).
    static func shared() async throws -> HostilePeer { try await Launcher.shared.peer() }

    private actor Launcher {
        static let shared = Launcher()
        private var task: Task<HostilePeer, any Error>?

        func peer() async throws -> HostilePeer {
            if let task { return try await task.value }
            let task = Task.detached {
                HostilePeer(
                    process: try await PeerProcess.launch(
                        script: "Tests/Peers/oauth_hostile_server.py",
                        name: "hostile",
                        priority: .shared
                    )
                )
            }
            self.task = task
            return try await task.value
        }
    }

    /// Registers `script` (see `Tests/Peers/README.md`).
    func script(_ script: [String: any Sendable]) async throws -> Script {
        var request = URLRequest(url: url.appendingPathComponent("scripts"))
        request.httpMethod = "POST"
        request.httpBody = try JSONSerialization.data(withJSONObject: script)
        let (data, response) = try await URLSession.shared.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200,
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let id = object["id"] as? String, let text = object["url"] as? String, let scriptURL = URL(string: text)
        else {
            throw PeerError("the hostile peer refused the script: \(String(decoding: data, as: UTF8.self))")
        }
        return Script(id: id, url: scriptURL)
    }

    /// A script field for a body of `prefix + fill × count + suffix`, generated while it is sent.
    static func repeated(_ fill: String, count: Int, prefix: String = "", suffix: String = "") -> [String: any Sendable]
    {
        ["prefix": prefix, "fill": fill, "count": count, "suffix": suffix]
    }

    /// A 200 JSON answer with `body`.
    func json(_ body: String, status: Int = 200) async throws -> Script {
        try await script(["status": status, "body": body])
    }

    /// What happened to `script` so far.
    func stats(_ script: Script) async throws -> Stats {
        let (data, _) = try await URLSession.shared.data(from: url.appendingPathComponent("scripts/\(script.id)"))
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw PeerError("the hostile peer's stats are not JSON")
        }
        let requests = object["requests"] as? [[String: Any]] ?? []
        return Stats(
            hits: object["hits"] as? Int ?? -1,
            bytesSent: object["bytes_sent"] as? Int ?? -1,
            completed: object["completed"] as? Int ?? -1,
            aborted: object["aborted"] as? Int ?? -1,
            formKeys: requests.map { $0["form_keys"] as? [String] ?? [] },
            requests: requests.map {
                Stats.Request(method: $0["method"] as? String ?? "", headerNames: $0["header_names"] as? [String] ?? [])
            }
        )
    }

    /// The stats once the peer has finished with every request it received (bounded: a minute,
    /// then the stats as they are, for the test to judge).
    func settledStats(_ script: Script) async throws -> Stats {
        var stats = try await self.stats(script)
        let deadline = ContinuousClock.now + .seconds(60)
        while stats.completed + stats.aborted < stats.hits, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            stats = try await self.stats(script)
        }
        return stats
    }

    /// A configuration whose token endpoint is `script`.
    static func configuration(tokenEndpoint script: Script) -> ServiceConfiguration {
        ServiceConfiguration(tokenEndpoint: script.url.appendingPathComponent("token"))
    }
}
