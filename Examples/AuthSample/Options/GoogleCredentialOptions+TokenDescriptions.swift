import Foundation
import GoogleAuth
import OAuth2

extension GoogleCredentialOptions {
    /// How an external_account file's tokens are made: its source, the exchange, the
    /// impersonation.
    static func federationTokens(_ external: ExternalAccountCredentials, _ scopes: [String]) -> String {
        var text =
            "subject token from \(external.credentialSource) exchanged at \(GrantRequest.redacted(external.tokenURL))"
        if let account = external.impersonatedServiceAccount { text += ", impersonating \(account)" }
        return text + ", scopes: \(scopes.joined(separator: " "))"
    }

    /// What `status` shows of an external_account file: the pool provider, the source's kind and
    /// place, the impersonated service account.
    static func federationDetails(_ external: ExternalAccountCredentials) -> [String: String] {
        var details = [
            "audience": external.audience,
            "source_kind": external.credentialSource.kind.description,
            "source_location": external.credentialSource.location,
        ]
        if let account = external.impersonatedServiceAccount { details["impersonated_account"] = account }
        return details
    }

    /// How a service-account key's tokens are made, for `status`.
    static func grantTokens(_ key: ServiceAccountKey, _ scopes: [String]) -> String {
        "JWT bearer grant at \(GrantRequest.redacted(key.tokenURI)), scopes: \(scopes.joined(separator: " "))"
    }

    /// How a user's refresh token is spent, for `status`.
    static func refreshTokens(_ endpoint: URL) -> String {
        "refresh-token grant at \(GrantRequest.redacted(endpoint))"
    }

    /// What self-signed JWTs carry, for `status`.
    static func selfSignedTokens(_ scopes: [String]) -> String {
        scopes.isEmpty
            ? "self-signed JWTs, audience https://<host>/ of the target"
            : "self-signed JWTs, scope claim: \(scopes.joined(separator: " "))"
    }
}
