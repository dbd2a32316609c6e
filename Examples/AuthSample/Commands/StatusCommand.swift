import ArgumentParser
import Foundation
import GoogleAuth
import Logging
import OAuth2

/// `auth_sample status`: who is signed in, with which scopes, until when. Never the tokens.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract:
            "Show the stored session (user, scopes, token expiry), or the Google credentials --adc, --service-account-key or --authorized-user would use; never tokens or keys."
    )

    @Flag(name: .long, help: "Print one JSON object instead of text.")
    var json = false

    @OptionGroup(title: "Google credentials (instead of a stored session)") var google: GoogleCredentialOptions

    @OptionGroup var common: CommonOptions

    func run() async throws {
        try await runReportingFailures(json: json) { () async throws(ToolFailure) in
            if google.isSelected {
                let logger = common.logger(label: "auth_sample.google")
                await showGoogleCredentials(
                    try google.resolve(logger: logger, transport: HTTP1OAuthTransport.standard),
                    logger: logger
                )
                return
            }
            if google.impersonatesWithSession {
                // What `call --impersonate-service-account` would use over the stored session; nothing is sent.
                let handle = try common.store()
                let session = AuthSession(
                    state: try handle.require(),
                    store: handle.store,
                    logger: common.logger(label: "auth_sample.session")
                )
                let logger = common.logger(label: "auth_sample.google")
                let selection = try google.impersonating(
                    session,
                    origin: "session '\(handle.name)'",
                    sourceTokens: "the session's access token",
                    quotaProjectID: nil,
                    logger: logger,
                    transport: HTTP1OAuthTransport.standard
                )
                await showGoogleCredentials(selection, logger: logger)
                return
            }
            let handle = try common.store()
            let state = try handle.require()
            let formatter = ISO8601DateFormatter()
            let fresh = state.isAccessTokenFresh()
            if json {
                var object: [String: Any] = [
                    "session": handle.name, "path": handle.path, "client_id": state.client.id,
                    "token_endpoint": GrantRequest.redacted(state.configuration.tokenEndpoint),
                    "scopes": state.effectiveScopes, "grant": state.grant.type.rawValue,
                    "signed_in_at": formatter.string(from: state.grant.date),
                    "access_token_fresh": fresh, "has_refresh_token": state.refreshToken != nil,
                ]
                if let issuer = state.configuration.issuer { object["issuer"] = GrantRequest.redacted(issuer) }
                if let email = state.userEmail { object["user_email"] = email }
                if let verified = state.userEmailIsVerified { object["user_email_verified"] = verified }
                if let id = state.userID { object["user_id"] = id }
                if let expiry = state.accessTokenExpiresAt {
                    object["access_token_expires_at"] = formatter.string(from: expiry)
                }
                if let error = state.authorizationError { object["authorization_error"] = error.code }
                Output.printJSON(object)
                return
            }
            Output.line("Session '\(handle.name)' (\(handle.path))")
            Output.line(
                "  User:          \(IdentitySummary(state: state) ?? "unknown (no ID token; sign in with the openid scope)")"
            )
            Output.line(
                "  Issuer:        \(GrantRequest.redacted(state.configuration.issuer ?? state.configuration.tokenEndpoint))"
            )
            Output.line("  Client:        \(state.client.id)")
            Output.line("  Scopes:        \(state.effectiveScopes.joined(separator: " "))")
            Output.line("  Signed in:     \(formatter.string(from: state.grant.date)) (\(state.grant.type.rawValue))")
            Output.line("  Access token:  \(accessTokenSummary(state, fresh: fresh, formatter: formatter))")
            Output.line("  Refresh token: \(state.refreshToken == nil ? "none" : "present")")
            if let error = state.authorizationError {
                Output.line(
                    "  Stopped:       the authorization server refused to refresh (\(error.code)); sign in again"
                )
            }
        }
    }

    /// Who the Google credentials act as, where they were found, how tokens are made. Nothing is
    /// sent, except to ask a metadata server which account is the instance's.
    private func showGoogleCredentials(_ selection: GoogleSelection, logger: Logger) async {
        let identity = selection.credentials.identity
        var principal = identity.principal
        var principalNote = ""
        switch await selection.metadataPrincipal(logger: logger) {
        case .success(let email)?:
            principal = email
            principalNote = " (as the metadata server says)"
        case .failure(let error)?:
            principalNote = " (the metadata server did not say which account: \(error.message))"
        case nil:
            break
        }
        // The metadata server's universe is known only by asking it; a call checks it the same way.
        var universe = identity.universeDomain
        var universeNote = ""
        switch await selection.metadataUniverse(logger: logger) {
        case .success(let domain)?:
            universe = domain
            universeNote = " (as the metadata server says)"
        case .failure(let error)?:
            universeNote = " (the metadata server did not say which universe: \(error.message))"
        case nil:
            break
        }
        if json {
            var object: [String: Any] = [
                "credential_type": identity.kind.rawValue, "principal": principal, "found_in": selection.origin,
                "tokens": selection.tokens,
            ]
            if let source = identity.source { object["source"] = source }
            if let project = identity.projectID { object["project_id"] = project }
            if let quota = identity.quotaProjectID { object["quota_project_id"] = quota }
            if !identity.chain.isEmpty { object["chain"] = identity.chain }
            object["universe_domain"] = universe
            for (key, value) in selection.federation { object[key] = value }
            Output.printJSON(object)
            return
        }
        Output.line("Google credentials")
        Output.line("  Type:          \(identity.kind.rawValue)")
        Output.line("  Principal:     \(principal)\(principalNote)")
        Output.line("  Source:        \(identity.source ?? "unknown")")
        Output.line("  Found in:      \(selection.origin)")
        if !identity.chain.isEmpty { Output.line("  Chain:         \(identity.chain.joined(separator: " -> "))") }
        if let audience = selection.federation["audience"] { Output.line("  Audience:      \(audience)") }
        if let kind = selection.federation["source_kind"] {
            Output.line("  Subject token: \(kind) \(selection.federation["source_location"] ?? "")")
        }
        if let account = selection.federation["impersonated_account"] {
            Output.line("  Impersonates:  \(account)")
        }
        if let project = identity.projectID { Output.line("  Project:       \(project)") }
        if let quota = identity.quotaProjectID {
            Output.line("  Quota project: \(quota) (sent as x-goog-user-project)")
        }
        Output.line("  Tokens:        \(selection.tokens)")
        if universe != GoogleCredentialIdentity.defaultUniverseDomain || !universeNote.isEmpty {
            Output.line("  Universe:      \(universe)\(universeNote)")
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
