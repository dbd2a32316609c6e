import ArgumentParser
import Foundation
import OAuth2

/// `auth_sample status`: who is signed in, with which scopes, until when. Never the tokens.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the stored session: user, scopes, token expiry (never the tokens).")

    @Flag(name: .long, help: "Print one JSON object instead of text.")
    var json = false

    @OptionGroup var common: CommonOptions

    func run() async throws {
        try await runReportingFailures(json: json) { () async throws(ToolFailure) in
            let handle = try common.store()
            let state = try handle.require()
            let formatter = ISO8601DateFormatter()
            let fresh = state.isAccessTokenFresh()
            if json {
                var object: [String: Any] = [
                    "session": handle.name, "path": handle.path, "client_id": state.client.id,
                    "token_endpoint": state.configuration.tokenEndpoint.absoluteString,
                    "scopes": state.effectiveScopes, "grant": state.grant.type.rawValue,
                    "signed_in_at": formatter.string(from: state.grant.date),
                    "access_token_fresh": fresh, "has_refresh_token": state.refreshToken != nil,
                ]
                if let issuer = state.configuration.issuer { object["issuer"] = issuer.absoluteString }
                if let email = state.userEmail { object["user_email"] = email }
                if let verified = state.userEmailIsVerified { object["user_email_verified"] = verified }
                if let id = state.userID { object["user_id"] = id }
                if let expiry = state.accessTokenExpiresAt { object["access_token_expires_at"] = formatter.string(from: expiry) }
                if let error = state.authorizationError { object["authorization_error"] = error.code }
                Output.printJSON(object)
                return
            }
            Output.line("Session '\(handle.name)' (\(handle.path))")
            Output.line("  User:          \(IdentitySummary(state: state) ?? "unknown (no ID token; sign in with the openid scope)")")
            Output.line("  Issuer:        \(state.configuration.issuer?.absoluteString ?? state.configuration.tokenEndpoint.absoluteString)")
            Output.line("  Client:        \(state.client.id)")
            Output.line("  Scopes:        \(state.effectiveScopes.joined(separator: " "))")
            Output.line("  Signed in:     \(formatter.string(from: state.grant.date)) (\(state.grant.type.rawValue))")
            Output.line("  Access token:  \(accessTokenSummary(state, fresh: fresh, formatter: formatter))")
            Output.line("  Refresh token: \(state.refreshToken == nil ? "none" : "present")")
            if let error = state.authorizationError {
                Output.line("  Stopped:       the authorization server refused to refresh (\(error.code)); sign in again")
            }
        }
    }

    /// What the access token is good for, and what the next call will do about it.
    private func accessTokenSummary(_ state: AuthState, fresh: Bool, formatter: ISO8601DateFormatter) -> String {
        if let error = state.authorizationError {
            return "unusable: the session was stopped (\(error.code)); sign in again"
        }
        guard state.accessToken != nil else { return "none" }
        let expiry = state.accessTokenExpiresAt.map { formatter.string(from: $0) } ?? "not stated"
        if fresh { return "valid until \(expiry)" }
        if state.refreshToken == nil && state.grant.type != .clientCredentials {
            return "expired or stale (\(expiry)) and there is no refresh token; sign in again"
        }
        return "expired or stale (\(expiry)); the next call refreshes it"
    }
}
