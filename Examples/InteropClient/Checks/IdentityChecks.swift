import AuthSampleService

/// What the auth cases assert on the identity the server echoed.
enum IdentityChecks {
    /// `username` is `expected` (the key's `client_email`, or `--default_service_account`).
    static func username(_ response: Grpc_Testing_SimpleResponse, is expected: String) throws(CaseFailure) {
        guard response.username == expected else {
            throw CaseFailure(
                what: "SimpleResponse.username",
                expected: Printable.quoted(expected),
                seen: Printable.quoted(response.username)
            )
        }
    }

    /// `oauth_scope` is set and each scope in it is one of `allowed` (`--oauth_scope`'s).
    static func scope(_ response: Grpc_Testing_SimpleResponse, within allowed: [String]) throws(CaseFailure) {
        let granted = response.oauthScope.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        guard !granted.isEmpty, granted.allSatisfy(allowed.contains) else {
            throw CaseFailure(
                what: "SimpleResponse.oauth_scope",
                expected: "a scope within \(Printable.quoted(allowed.joined(separator: " ")))",
                seen: Printable.quoted(response.oauthScope)
            )
        }
    }

    /// large_unary's request asking for the caller's username (and scope).
    static func request(fillScope: Bool) -> Grpc_Testing_SimpleRequest {
        var request = Payloads.largeRequest()
        request.fillUsername = true
        request.fillOauthScope = fillScope
        return request
    }
}
