import AuthRPC
import Foundation
import GoogleAuth
import Logging
import OAuth2

extension GoogleCredentialOptions {
    /// `source` impersonating the accounts of --impersonate-service-account (gcloud's comma
    /// chain: the last is acted as), for access tokens or, with --id-token-audience, ID tokens.
    func impersonating(
        _ source: any InvalidatableAuthTokenProvider,
        origin: String,
        sourceTokens: String,
        quotaProjectID: String?,
        logger: Logger,
        transport: any OAuthTransport
    ) throws(ToolFailure) -> GoogleSelection {
        let scopes = self.scopes.isEmpty ? [ServiceConfiguration.googleTestScope] : self.scopes
        let chain = (impersonateServiceAccount ?? "").split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard let target = chain.last, chain.allSatisfy({ !$0.isEmpty }) else {
            throw ToolFailure(
                status: .usage,
                message: "--impersonate-service-account needs one or more emails, separated by commas"
            )
        }
        let delegates = Array(chain.dropLast())
        let tokenSource: any GoogleTokenSource
        let tokens: String
        if let idTokenAudience {
            let endpoint = try iamURL(target, "generateIdToken")
            tokenSource = try Self.commandLine { () throws(OAuthError) in
                try ImpersonatedIDTokenSource(
                    source: source,
                    targetPrincipal: target,
                    delegates: delegates,
                    audience: idTokenAudience,
                    endpoint: endpoint,
                    transport: transport,
                    logger: logger
                )
            }
            tokens = "ID tokens for \(idTokenAudience) from generateIdToken at \(Self.shown(tokenSource))"
        } else {
            let endpoint = try iamURL(target, "generateAccessToken")
            tokenSource = try Self.commandLine { () throws(OAuthError) in
                try ImpersonatedTokenSource(
                    source: source,
                    targetPrincipal: target,
                    delegates: delegates,
                    scopes: scopes,
                    endpoint: endpoint,
                    transport: transport,
                    logger: logger
                )
            }
            tokens = "generateAccessToken at \(Self.shown(tokenSource)), scopes: \(scopes.joined(separator: " "))"
        }
        let credentials = try Self.commandLine { () throws(OAuthError) in
            try GoogleCredentials(source: tokenSource, quotaProjectID: quotaProjectID, logger: logger)
        }
        return GoogleSelection(
            credentials: credentials,
            origin: "--impersonate-service-account over \(origin)",
            tokens: "\(tokens); source tokens: \(sourceTokens)"
        )
    }

    /// Where an impersonation source sends its requests, for `status`.
    static func shown(_ source: any GoogleTokenSource) -> String {
        if let source = source as? ImpersonatedTokenSource { return GrantRequest.redacted(source.endpoint) }
        if let source = source as? ImpersonatedIDTokenSource { return GrantRequest.redacted(source.endpoint) }
        return source.description
    }
}
