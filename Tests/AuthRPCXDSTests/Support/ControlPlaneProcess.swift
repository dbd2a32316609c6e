import Foundation
import TestSupport

/// Tests/Peers/xds_control_plane.py running as a child process: ADS on 127.0.0.1, and an HTTP
/// admin port through which a test changes the resources and reads what the client sent.
struct ControlPlaneProcess: Sendable {
    let process: PeerProcess
    var port: Int { process.int("port") }
    var adminPort: Int { process.int("admin_port") }

    /// Starts one, on `port` when given (a restart on the same address), with the script's
    /// further `arguments` (`--tls-cert`, `--introspection-url`, ...).
    static func launch(port: Int = 0, arguments: [String] = []) async throws -> ControlPlaneProcess {
        ControlPlaneProcess(
            process: try await PeerProcess.launch(
                script: "Tests/Peers/xds_control_plane.py",
                name: "xds-control-plane",
                arguments: ["--port", String(port)] + arguments
            )
        )
    }

    /// One change (see `apply_command` in the script).
    func command(_ command: [String: any Sendable]) throws {
        let body = try JSONSerialization.data(withJSONObject: command)
        let answer = try exchange(
            Array("POST /command HTTP/1.1\r\nHost: admin\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + Array(body)
        )
        guard answer.status == 200 else { throw PeerError("the control plane refused \(command): \(answer.body)") }
    }

    /// Every request a client sent, as recorded (`type_url`, `version_info`, `response_nonce`,
    /// `resource_names`, `error_detail`, `node_id`).
    func requests() throws -> [[String: Any]] {
        let answer = try exchange(Array("GET /requests HTTP/1.1\r\nHost: admin\r\n\r\n".utf8))
        return try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [[String: Any]] ?? []
    }

    /// Every response sent: type URL, version, nonce.
    func sent() throws -> [[String]] {
        let answer = try exchange(Array("GET /sent HTTP/1.1\r\nHost: admin\r\n\r\n".utf8))
        return try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [[String]] ?? []
    }

    /// How each ADS stream's bearer token was judged, in order: `accepted` or `refused`, the
    /// reason (empty when accepted), and the token's fingerprint (its SHA-256's first 12 hex
    /// digits).
    func authorizations() throws -> [[String]] {
        let answer = try exchange(Array("GET /authorizations HTTP/1.1\r\nHost: admin\r\n\r\n".utf8))
        return try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [[String]] ?? []
    }

    /// How many ADS streams are open now and how many have ended; with `untilOpen`, once that
    /// many are open (the control plane waits up to 20 s for it, then answers as things are).
    func streams(untilOpen: Int? = nil) throws -> (open: Int, ended: Int) {
        let query = untilOpen.map { "?until_open=\($0)" } ?? ""
        let answer = try exchange(
            Array("GET /streams\(query) HTTP/1.1\r\nHost: admin\r\n\r\n".utf8),
            timeoutSeconds: 30
        )
        let counts = try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Int] ?? [:]
        guard let open = counts["open"], let ended = counts["ended"] else {
            throw PeerError("the control plane's stream counts do not parse: \(answer.body)")
        }
        return (open, ended)
    }

    private func exchange(_ request: [UInt8], timeoutSeconds: Int = 10) throws -> (status: Int, body: String) {
        let socket = try LoopbackSocket(port: adminPort, timeoutSeconds: timeoutSeconds)
        defer { socket.close() }
        try socket.send(request)
        let text = String(decoding: try socket.receiveAll(), as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n") else { throw PeerError("the admin answer has no end of header") }
        let status = Int(text.split(separator: " ").dropFirst().first ?? "") ?? 0
        return (status, String(text[end.upperBound...]))
    }
}
