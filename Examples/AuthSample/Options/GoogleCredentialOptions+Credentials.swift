import Foundation
import GoogleAuth
import Logging
import OAuth2

extension GoogleCredentialOptions {
    /// `GOOGLE_CLOUD_UNIVERSE_DOMAIN`, for credentials named by a flag (Application Default
    /// Credentials read it themselves); `googleapis.com` when unset. GoogleCredentials checks it.
    static var environmentUniverse: String {
        ProcessInfo.processInfo.environment[ApplicationDefaultCredentials.universeDomainVariable]
            ?? GoogleCredentialIdentity.defaultUniverseDomain
    }

    /// The credentials the selecting flags name, asking for `scopes`.
    func resolve(
        scopes: [String],
        logger: Logger,
        transport: any OAuthTransport
    ) throws(ToolFailure) -> GoogleSelection {
        if let serviceAccountKey {
            let key = try Self.readFile(
                "--service-account-key",
                serviceAccountKey,
                hint: "give the JSON key file of a service account"
            ) {
                () throws(OAuthError) in try ServiceAccountKey(contentsOfFile: serviceAccountKey)
            }
            let origin = "--service-account-key \(serviceAccountKey)"
            if selfSignedJwt {
                let credentials = try Self.commandLine { () throws(OAuthError) in
                    try GoogleCredentials(
                        selfSignedJWTsFor: key,
                        scopes: self.scopes,
                        universeDomain: universeDomain ?? Self.environmentUniverse,
                        logger: logger
                    )
                }
                return GoogleSelection(
                    credentials: credentials,
                    origin: origin,
                    tokens: Self.selfSignedTokens(self.scopes)
                )
            }
            let credentials = try Self.commandLine { () throws(OAuthError) in
                try GoogleCredentials(
                    source: ServiceAccountTokenSource(key: key, scopes: scopes, transport: transport, logger: logger),
                    universeDomain: universeDomain ?? Self.environmentUniverse,
                    logger: logger
                )
            }
            return GoogleSelection(credentials: credentials, origin: origin, tokens: Self.grantTokens(key, scopes))
        }
        if let authorizedUser {
            let user = try Self.readFile(
                "--authorized-user",
                authorizedUser,
                hint: "give gcloud's application_default_credentials.json (type authorized_user)"
            ) {
                () throws(OAuthError) in try AuthorizedUserCredentials(contentsOfFile: authorizedUser)
            }
            let endpoint = try userEndpoint()
            let credentials = try Self.commandLine { () throws(OAuthError) in
                try GoogleCredentials(
                    source: AuthorizedUserTokenSource(
                        credentials: user,
                        tokenEndpoint: endpoint,
                        transport: transport,
                        logger: logger
                    ),
                    universeDomain: universeDomain ?? Self.environmentUniverse,
                    logger: logger
                )
            }
            return GoogleSelection(
                credentials: credentials,
                origin: "--authorized-user \(authorizedUser)",
                tokens: Self.refreshTokens(endpoint)
            )
        }

        let resolved = try Self.setUp { () throws(OAuthError) in try ApplicationDefaultCredentials.resolve() }
        let origin = "Application Default Credentials: \(resolved.origin)"
        if selfSignedJwt {
            guard let key = resolved.credential.serviceAccountKey else {
                throw ToolFailure(
                    status: .googleCredentialsUnusable,
                    message:
                        "--self-signed-jwt needs a service-account key, and Application Default Credentials found \(resolved.identity.kind.rawValue) credentials in \(resolved.origin)"
                )
            }
            let credentials = try Self.setUp { () throws(OAuthError) in
                try GoogleCredentials(
                    selfSignedJWTsFor: key,
                    scopes: self.scopes,
                    quotaProjectID: resolved.quotaProjectID,
                    universeDomain: universeDomain ?? resolved.universeDomain
                        ?? GoogleCredentialIdentity.defaultUniverseDomain,
                    logger: logger
                )
            }
            return GoogleSelection(credentials: credentials, origin: origin, tokens: Self.selfSignedTokens(self.scopes))
        }
        let endpoint = try userEndpoint()
        let credentials = try Self.setUp { () throws(OAuthError) in
            try GoogleCredentials(
                resolved,
                scopes: scopes,
                userTokenEndpoint: endpoint,
                transport: transport,
                universeDomain: universeDomain,
                logger: logger
            )
        }
        if let key = resolved.credential.serviceAccountKey {
            // Outside googleapis.com a key always signs its own JWTs (GoogleCredentials chose so).
            let tokens =
                key.universeDomain == GoogleCredentialIdentity.defaultUniverseDomain
                ? Self.grantTokens(key, scopes) : Self.selfSignedTokens(scopes)
            return GoogleSelection(credentials: credentials, origin: origin, tokens: tokens)
        }
        if let impersonation = resolved.credential.impersonatedServiceAccount {
            return GoogleSelection(
                credentials: credentials,
                origin: origin,
                tokens:
                    "generateAccessToken at \(GrantRequest.redacted(impersonation.impersonationURL)), scopes: \(scopes.joined(separator: " "))"
            )
        }
        if let external = resolved.credential.externalAccountCredentials {
            return GoogleSelection(
                credentials: credentials,
                origin: origin,
                tokens: Self.federationTokens(external, scopes),
                federation: Self.federationDetails(external)
            )
        }
        if let user = resolved.credential.externalAccountAuthorizedUserCredentials {
            return GoogleSelection(
                credentials: credentials,
                origin: origin,
                tokens: "refresh-token grant at \(GrantRequest.redacted(user.tokenURL)) (a workforce pool user's)",
                federation: ["audience": user.audience]
            )
        }
        if let host = resolved.credential.metadataHost {
            return GoogleSelection(
                credentials: credentials,
                origin: origin,
                tokens: "the metadata server at \(host), scopes: \(scopes.joined(separator: " "))",
                metadataHost: host
            )
        }
        return GoogleSelection(credentials: credentials, origin: origin, tokens: Self.refreshTokens(endpoint))
    }
}
