import AuthRPCSystem
import AuthRPCTransport
import Foundation
import TestSupport

/// Talking to the scriptable HTTP/2 fault server at the HTTP/2 level.
enum FaultPeer {
    static func connect(
        _ personality: String = "h2c",
        configure: (inout HTTP2ConnectionConfiguration) -> Void = { _ in }
    ) async throws -> HTTP2Connection {
        let faults = try await Peers.faultServer()
        var configuration = HTTP2ConnectionConfiguration()
        configure(&configuration)
        return try await HTTP2Connection.connect(
            to: HostAndPort(host: faults.host, port: faults.port(personality)),
            configuration: configuration
        )
    }

    /// A gRPC-shaped request for a scenario.
    static func request(
        _ scenario: String,
        tag: String? = nil,
        headers: [HTTP2HeaderField] = [],
        message: [UInt8] = Array("hello".utf8),
        scheme: String = "http",
        deadline: ContinuousClock.Instant? = nil,
        maxBody: Int = .max
    ) -> HTTP2Request {
        var fields = [
            HTTP2HeaderField(name: "content-type", value: "application/grpc"),
            HTTP2HeaderField(name: "te", value: "trailers"),
        ]
        if let tag { fields.append(HTTP2HeaderField(name: "x-fault-tag", value: tag)) }
        fields += headers
        return HTTP2Request(
            scheme: scheme,
            authority: "faults.test",
            path: "/fault.Fault/\(scenario)",
            headers: fields,
            body: frame(message),
            deadline: deadline.map(ContinuousTime.init),
            maxResponseBodyBytes: maxBody
        )
    }

    static func frame(_ message: [UInt8]) -> [UInt8] {
        let n = UInt32(message.count)
        return [0, UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + message
    }

    /// The JSON object carried in a response's single message.
    static func json(_ response: HTTP2Response) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(response.body.dropFirst(5)))
        return object as? [String: Any] ?? [:]
    }

    /// Events the server recorded for `tag`, waiting (bounded) until one matches `until`.
    static func events(
        tag: String,
        on connection: HTTP2Connection,
        until done: ([[String: Any]]) -> Bool = { _ in true }
    ) async throws -> [[String: Any]] {
        var events: [[String: Any]] = []
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let response = try await connection.send(
                request("Events", headers: [HTTP2HeaderField(name: "x-fault-query-tag", value: tag)])
            )
            events = try json(response)["events"] as? [[String: Any]] ?? []
            if done(events) { return events }
            try await Task.sleep(for: .milliseconds(100))
        }
        return events
    }

    static func hasReset(_ events: [[String: Any]], code: Int) -> Bool {
        events.contains { $0["type"] as? String == "rst_stream" && $0["error_code"] as? Int == code }
    }

    static func newTag() -> String { "t-\(UUID().uuidString.lowercased())" }
}
