import AuthRPC
import AuthRPCSystem
import AuthRPCTransport
import Foundation
import TestSupport

/// gRPC calls to the fault server's scenarios, with raw bytes as messages.
enum FaultChannel {
    static func make(_ personality: String = "h2c", options: CallOptions = CallOptions()) async throws -> Channel {
        let faults = try await Peers.faultServer()
        return try Channel(
            target: "\(faults.host):\(faults.port(personality))",
            transportSecurity: .plaintext,
            defaultCallOptions: options,
            connectionBackoff: .patient
        )
    }

    static func method(_ scenario: String) -> MethodDescriptor {
        MethodDescriptor(service: "fault.Fault", method: scenario)
    }

    /// Calls a scenario with `message` as the request bytes; returns the response bytes.
    @discardableResult
    static func call(
        _ channel: Channel,
        _ scenario: String,
        message: [UInt8] = Array("hello".utf8),
        options: CallOptions? = nil
    ) async throws(RPCError) -> UnaryResponse<[UInt8]> {
        try await channel.unary(
            method(scenario),
            request: message,
            serializer: RawBytesCodec(),
            deserializer: RawBytesCodec(),
            options: options
        )
    }

    /// The request as the server saw it (the EchoRequest scenario).
    struct Echoed {
        var fields: [(name: String, value: String)]
        var body: [UInt8]

        func values(_ name: String) -> [String] { fields.filter { $0.name == name }.map(\.value) }
    }

    static func echoRequest(
        _ channel: Channel,
        message: [UInt8] = Array("hello".utf8),
        options: CallOptions? = nil
    ) async throws -> Echoed {
        let response = try await call(channel, "EchoRequest", message: message, options: options)
        let object = try JSONSerialization.jsonObject(with: Data(response.message)) as? [String: Any] ?? [:]
        let fields = (object["headers"] as? [[String]] ?? []).map { (name: $0[0], value: $0[1]) }
        let hex = object["body_hex"] as? String ?? ""
        var body: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            body.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return Echoed(fields: fields, body: body)
    }

    /// What the server recorded for `tag`, polling until `done` holds (a minute at most, then what
    /// it recorded so far, for the test to judge).
    static func events(
        _ channel: Channel,
        tag: String,
        until done: ([[String: Any]]) -> Bool = { _ in true }
    ) async throws -> [[String: Any]] {
        var options = CallOptions()
        options.initialMetadata.addString(tag, forKey: "x-fault-query-tag")
        var events: [[String: Any]] = []
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let response = try await call(channel, "Events", options: options)
            events =
                (try JSONSerialization.jsonObject(with: Data(response.message)) as? [String: Any])?["events"]
                as? [[String: Any]] ?? []
            if done(events) { return events }
            try await Task.sleep(for: .milliseconds(100))
        }
        return events
    }

    static func hasReset(_ events: [[String: Any]], code: Int = 8) -> Bool {
        events.contains { $0["type"] as? String == "rst_stream" && $0["error_code"] as? Int == code }
    }

    static func sawRequest(_ events: [[String: Any]]) -> Bool {
        events.contains { $0["type"] as? String == "headers" }
    }

    /// Options that tag the call, so the server's Events show whether anything arrived.
    static func tagged(_ tag: String, _ options: CallOptions = CallOptions()) -> CallOptions {
        var options = options
        options.initialMetadata.addString(tag, forKey: "x-fault-tag")
        return options
    }

    static func newTag() -> String { "t-\(UUID().uuidString.lowercased())" }
}

/// A token provider whose behaviour a test scripts.
final class ScriptedProvider: InvalidatableAuthTokenProvider {
    enum Behaviour: Sendable {
        case answer(String)
        case fail(any Error)
        case hang
    }

    private struct State {
        var tokenCalls = 0
        var invalidated: [String] = []
    }

    private let behaviour: Behaviour
    private let tokens: [String]
    /// Whether `invalidate(token:)` never returns (and ignores cancellation).
    private let invalidationHangs: Bool
    private let state = Locked(State())

    init(_ behaviour: Behaviour, then tokens: [String] = [], invalidationHangs: Bool = false) {
        self.behaviour = behaviour
        self.tokens = tokens
        self.invalidationHangs = invalidationHangs
    }

    var tokenCalls: Int { state.withLock { $0.tokenCalls } }
    var invalidated: [String] { state.withLock { $0.invalidated } }

    func token() async throws -> String {
        let call = state.withLock { state -> Int in
            state.tokenCalls += 1
            return state.tokenCalls
        }
        if call > 1, call - 2 < tokens.count { return tokens[call - 2] }
        switch behaviour {
        case .answer(let token):
            return token
        case .fail(let error):
            throw error
        case .hang:
            // Ignores cancellation on purpose: the call must not wait for it.
            await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }
            return "never"
        }
    }

    func invalidate(token: String) async {
        state.withLock { $0.invalidated.append(token) }
        if invalidationHangs {
            await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }
        }
    }
}

/// A provider error that says it is transient.
struct TransientFailure: AuthTokenProviderError, CustomStringConvertible {
    var isTransient: Bool { true }
    var description: String { "token endpoint unreachable" }
}

/// A provider error that says it is permanent.
struct RevokedGrant: AuthTokenProviderError, CustomStringConvertible {
    var isTransient: Bool { false }
    var description: String { "invalid_grant: the refresh token was revoked" }
}
