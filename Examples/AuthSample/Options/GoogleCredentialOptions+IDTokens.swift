import Foundation
import GoogleAuth
import Logging
import OAuth2

extension GoogleCredentialOptions {
    /// ID tokens for `audience` from the credentials chosen, without impersonation: a
    /// service-account key's JWT bearer grant with target_audience, or what ADC finds.
    func idTokens(
        for audience: String,
        logger: Logger,
        transport: any OAuthTransport
    ) throws(ToolFailure) -> GoogleSelection {
        if authorizedUser != nil {
            throw ToolFailure(
                status: .usage,
                message:
                    "--id-token-audience: a user's authorized_user credentials get no ID tokens for an audience; add --impersonate-service-account EMAIL"
            )
        }
        if let serviceAccountKey {
            let key = try Self.readFile(
                "--service-account-key",
                serviceAccountKey,
                hint: "give the JSON key file of a service account"
            ) {
                () throws(OAuthError) in try ServiceAccountKey(contentsOfFile: serviceAccountKey)
            }
            let credentials = try Self.commandLine { () throws(OAuthError) in
                try GoogleCredentials(
                    source: ServiceAccountIDTokenSource(
                        key: key,
                        audience: audience,
                        transport: transport,
                        logger: logger
                    ),
                    logger: logger
                )
            }
            return GoogleSelection(
                credentials: credentials,
                origin: "--service-account-key \(serviceAccountKey)",
                tokens:
                    "ID tokens for \(audience) from the JWT bearer grant (target_audience) at \(GrantRequest.redacted(key.tokenURI))"
            )
        }
        let resolved = try Self.setUp { () throws(OAuthError) in try ApplicationDefaultCredentials.resolve() }
        let endpoint = try userEndpoint()
        let credentials = try Self.setUp { () throws(OAuthError) in
            try GoogleCredentials(
                source: resolved.idTokenSource(
                    audience: audience,
                    userTokenEndpoint: endpoint,
                    transport: transport,
                    logger: logger
                ),
                quotaProjectID: resolved.quotaProjectID,
                logger: logger
            )
        }
        let how: String
        if let key = resolved.credential.serviceAccountKey {
            how = "the JWT bearer grant (target_audience) at \(GrantRequest.redacted(key.tokenURI))"
        } else if let host = resolved.credential.metadataHost {
            how = "the metadata server's identity endpoint at \(host)"
        } else if let impersonation = resolved.credential.impersonatedServiceAccount {
            how = "generateIdToken at \(GrantRequest.redacted(impersonation.idTokenURL))"
        } else {
            how = "the credential"
        }
        return GoogleSelection(
            credentials: credentials,
            origin: "Application Default Credentials: \(resolved.origin)",
            tokens: "ID tokens for \(audience) from \(how)",
            metadataHost: resolved.credential.metadataHost
        )
    }
}
