import AuthRPC
import AuthSampleService

/// pick_first_unary (Go's): 100 calls with `fill_server_id` all reach one server: every
/// `server_id` is set and the same.
struct PickFirstUnary: InteropCase {
    static let calls = 100

    func run(_ context: CaseContext) async throws {
        var request = Payloads.request(requestSize: 1, responseSize: 1)
        request.fillServerID = true
        let sent = request
        var first: String?
        for call in 0..<Self.calls {
            let response = try await expectSuccess("UnaryCall \(call + 1)") { () async throws(RPCError) in
                try await context.testService.unaryCall(sent, options: context.options)
            }
            let id = response.message.serverID
            guard !id.isEmpty else {
                throw CaseFailure(what: "server_id of call \(call + 1)", expected: "a server id", seen: "none")
            }
            if let first, id != first {
                throw CaseFailure(
                    what: "server_id of call \(call + 1)",
                    expected: "the first call's \(Printable.quoted(first))",
                    seen: Printable.quoted(id)
                )
            }
            first = id
        }
    }
}
