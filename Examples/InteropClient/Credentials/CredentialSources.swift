import AuthRPC
import Foundation
import GoogleAuth
import OAuth2

/// The credentials the auth cases use, made with GoogleAuth from the flags and the environment,
/// as gRPC's clients make theirs with their auth libraries.
struct CredentialSources: Sendable {
    let flags: InteropFlags
    let environment: [String: String]

    /// The metadata server: `GCE_METADATA_HOST` when set (as Google's libraries read it), else
    /// `metadata.google.internal`.
    var metadataHost: String {
        environment["GCE_METADATA_HOST"].flatMap { $0.isEmpty ? nil : $0 } ?? ComputeEngineTokenSource.defaultHost
    }

    /// Whether a key was given, by flag or by `GOOGLE_APPLICATION_CREDENTIALS`.
    var hasServiceAccountKey: Bool {
        flags.serviceAccountKeyFile != nil || environment["GOOGLE_APPLICATION_CREDENTIALS"] != nil
    }

    /// The service account key: `--service_account_key_file`, else `GOOGLE_APPLICATION_CREDENTIALS`.
    func serviceAccountKey() throws -> ServiceAccountKey {
        guard let path = flags.serviceAccountKeyFile ?? environment["GOOGLE_APPLICATION_CREDENTIALS"] else {
            throw SetupFailure("\(flags.testCase) needs --service_account_key_file (or GOOGLE_APPLICATION_CREDENTIALS)")
        }
        do {
            return try ServiceAccountKey(contentsOfFile: path)
        } catch {
            throw SetupFailure("cannot use the service account key \(path): \(error.message)")
        }
    }

    /// `--oauth_scope`'s scopes; a usage failure when the case needs them and there are none.
    func requiredScopes() throws -> [String] {
        guard !flags.scopes.isEmpty else { throw SetupFailure("\(flags.testCase) needs --oauth_scope") }
        return flags.scopes
    }

    /// `--default_service_account`; a usage failure when it is missing.
    func defaultServiceAccount() throws -> String {
        guard let account = flags.defaultServiceAccount, !account.isEmpty else {
            throw SetupFailure("\(flags.testCase) needs --default_service_account")
        }
        return account
    }

    /// Tokens from the metadata server for `scopes` (the instance's own scopes when empty).
    func computeEngine(scopes: [String]) throws -> ComputeEngineTokenSource {
        try make { () throws(OAuthError) in try ComputeEngineTokenSource(host: metadataHost, scopes: scopes) }
    }

    /// The JWT bearer grant of `key` for `scopes`, at the key's token endpoint.
    func serviceAccount(_ key: ServiceAccountKey, scopes: [String]) throws -> ServiceAccountTokenSource {
        try make { () throws(OAuthError) in try ServiceAccountTokenSource(key: key, scopes: scopes) }
    }

    /// A call provider around `source`.
    func provider(_ source: any GoogleTokenSource) throws -> GoogleCredentials {
        try make { () throws(OAuthError) in try GoogleCredentials(source: source) }
    }

    /// Self-signed JWTs of `key`, one per audience (`https://<host>/` of each call).
    func selfSignedJWTs(_ key: ServiceAccountKey) throws -> GoogleCredentials {
        try make { () throws(OAuthError) in try GoogleCredentials(selfSignedJWTsFor: key) }
    }

    /// Application Default Credentials, with `--oauth_scope`'s scopes when given.
    func applicationDefault() throws -> GoogleCredentials {
        try make { () throws(OAuthError) in
            try GoogleCredentials.applicationDefault(scopes: flags.scopes, environment: .init(variables: environment))
        }
    }

    private func make<Made>(_ body: () throws(OAuthError) -> Made) throws -> Made {
        do {
            return try body()
        } catch {
            throw SetupFailure("cannot make the credentials of \(flags.testCase): \(error.message)")
        }
    }
}
