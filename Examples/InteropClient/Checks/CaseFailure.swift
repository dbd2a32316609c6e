import AuthRPC

/// Why a case failed: what was checked, what the description expects, and what the server's
/// answer held.
struct CaseFailure: Error, CustomStringConvertible {
    /// The step or value checked (`UnaryCall`, `the response payload`).
    var what: String
    /// What the description asserts.
    var expected: String
    /// What came back.
    var seen: String

    var description: String { "\(what): expected \(expected), saw \(seen)" }

    /// A call that should have succeeded and failed.
    static func callFailed(_ what: String, _ error: RPCError) -> CaseFailure {
        CaseFailure(what: what, expected: "OK", seen: "\(error.code): \(Printable.text(error.message))")
    }
}

/// Runs a call that must succeed; its failure becomes a ``CaseFailure`` naming `what`.
func expectSuccess<Response>(
    _ what: String,
    _ call: () async throws(RPCError) -> Response
) async throws(CaseFailure) -> Response {
    do {
        return try await call()
    } catch {
        throw .callFailed(what, error)
    }
}

/// Runs a call that must fail with `code` (and `message`, when given); returns its error.
@discardableResult
func expectFailure<Response>(
    _ what: String,
    code: StatusCode,
    message: String? = nil,
    _ call: () async throws(RPCError) -> Response
) async throws(CaseFailure) -> RPCError {
    do {
        _ = try await call()
    } catch {
        guard error.code == code else {
            throw CaseFailure(
                what: what,
                expected: "status \(code)",
                seen: "\(error.code): \(Printable.text(error.message))"
            )
        }
        if let message, error.message != message {
            throw CaseFailure(
                what: "\(what) status message",
                expected: Printable.quoted(message),
                seen: Printable.quoted(error.message)
            )
        }
        return error
    }
    throw CaseFailure(what: what, expected: "status \(code)", seen: "OK")
}

/// Fails unless `seen == expected`.
func expectEqual<Value: Equatable>(_ what: String, _ seen: Value, _ expected: Value) throws(CaseFailure) {
    guard seen == expected else {
        throw CaseFailure(what: what, expected: "\(expected)", seen: "\(seen)")
    }
}
