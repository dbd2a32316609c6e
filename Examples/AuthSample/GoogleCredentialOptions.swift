import ArgumentParser
import Foundation
import GoogleAuth
import Logging
import OAuth2

/// `--adc`, `--service-account-key FILE` and how their tokens are made: Google credentials for
/// `call` and `status`, instead of a stored session.
struct GoogleCredentialOptions: ParsableArguments {
    @Flag(name: .long, help: ArgumentHelp(
        "Use Google's Application Default Credentials: $GOOGLE_APPLICATION_CREDENTIALS, gcloud's application_default_credentials.json, "
            + "then the metadata server when $GCE_METADATA_HOST is set or this is a Google VM."))
    var adc = false

    @Option(name: .long, help: ArgumentHelp("A Google service-account key file (JSON).", valueName: "file"))
    var serviceAccountKey: String?

    @Flag(name: .long, help: "With a service-account key: send self-signed JWTs (audience https://<host>/ of the target) instead of asking its token endpoint.")
    var selfSignedJwt = false

    @Option(name: .customLong("scope"), help: ArgumentHelp(
        "A scope to ask for with Google credentials (repeatable; default \(ServiceConfiguration.googleTestScope); "
            + "with --self-signed-jwt, a scope claim instead of an audience).", valueName: "scope"))
    var scopes: [String] = []

    @Option(name: .long, help: ArgumentHelp("Where --adc sends an authorized user's refresh (default Google's token endpoint).", valueName: "url"))
    var userTokenEndpoint: String?

    /// Whether Google credentials were asked for.
    var isSelected: Bool { adc || serviceAccountKey != nil }

    func validate() throws {
        if adc, serviceAccountKey != nil { throw ValidationError("give --adc or --service-account-key, not both") }
        if !isSelected {
            for (given, flag) in [(selfSignedJwt, "--self-signed-jwt"), (!scopes.isEmpty, "--scope"), (userTokenEndpoint != nil, "--user-token-endpoint")] where given {
                throw ValidationError("\(flag) only applies with --adc or --service-account-key")
            }
        }
        if userTokenEndpoint != nil, !adc { throw ValidationError("--user-token-endpoint only applies with --adc") }
    }

    /// The credentials asked for, read now (no request is sent).
    func resolve(logger: Logger) throws(ToolFailure) -> GoogleSelection {
        let scopes = self.scopes.isEmpty ? [ServiceConfiguration.googleTestScope] : self.scopes
        if let serviceAccountKey {
            let key = try Self.setUp { () throws(OAuthError) in try ServiceAccountKey(contentsOfFile: serviceAccountKey) }
            let origin = "--service-account-key \(serviceAccountKey)"
            if selfSignedJwt {
                let credentials = try Self.setUp { () throws(OAuthError) in try GoogleCredentials(selfSignedJWTsFor: key, scopes: self.scopes, logger: logger) }
                return GoogleSelection(credentials: credentials, origin: origin, tokens: Self.selfSignedTokens(self.scopes))
            }
            let credentials = try Self.setUp { () throws(OAuthError) in
                try GoogleCredentials(source: ServiceAccountTokenSource(key: key, scopes: scopes, logger: logger), logger: logger)
            }
            return GoogleSelection(credentials: credentials, origin: origin, tokens: Self.grantTokens(key, scopes))
        }

        let resolved = try Self.setUp { () throws(OAuthError) in try ApplicationDefaultCredentials.resolve() }
        let origin = "\(resolved.origin)"
        if selfSignedJwt {
            guard case .serviceAccount(let key) = resolved.credential else {
                throw ToolFailure(status: .googleCredentialsUnusable,
                                  message: "--self-signed-jwt needs a service-account key, and Application Default Credentials found \(resolved.identity.kind.rawValue) credentials in \(origin)")
            }
            let credentials = try Self.setUp { () throws(OAuthError) in
                try GoogleCredentials(selfSignedJWTsFor: key, scopes: self.scopes, quotaProjectID: resolved.quotaProjectID, logger: logger)
            }
            return GoogleSelection(credentials: credentials, origin: origin, tokens: Self.selfSignedTokens(self.scopes))
        }
        let endpoint = try userEndpoint()
        let credentials = try Self.setUp { () throws(OAuthError) in
            try GoogleCredentials(resolved, scopes: scopes, userTokenEndpoint: endpoint, logger: logger)
        }
        let tokens: String
        switch resolved.credential {
        case .serviceAccount(let key): tokens = Self.grantTokens(key, scopes)
        case .authorizedUser: tokens = "refresh-token grant at \(endpoint.absoluteString)"
        case .computeEngine(let host): tokens = "the metadata server at \(host), scopes: \(scopes.joined(separator: " "))"
        }
        return GoogleSelection(credentials: credentials, origin: origin, tokens: tokens)
    }

    /// `body`, its failure turned into the tool's.
    private static func setUp<T>(_ body: () throws(OAuthError) -> T) throws(ToolFailure) -> T {
        do throws(OAuthError) { return try body() } catch { throw Failures.googleSetup(error) }
    }

    private static func grantTokens(_ key: ServiceAccountKey, _ scopes: [String]) -> String {
        "JWT bearer grant at \(key.tokenURI.absoluteString), scopes: \(scopes.joined(separator: " "))"
    }

    private func userEndpoint() throws(ToolFailure) -> URL {
        guard let userTokenEndpoint else { return AuthorizedUserTokenSource.googleTokenEndpoint }
        guard let url = URL(string: userTokenEndpoint), url.scheme != nil, url.host != nil else {
            throw ToolFailure(status: .usage, message: "--user-token-endpoint \(userTokenEndpoint) is not an absolute URL")
        }
        return url
    }

    private static func selfSignedTokens(_ scopes: [String]) -> String {
        scopes.isEmpty ? "self-signed JWTs, audience https://<host>/ of the target" : "self-signed JWTs, scope claim: \(scopes.joined(separator: " "))"
    }
}

/// Google credentials read from the command line or the environment, and what to say about them.
struct GoogleSelection {
    let credentials: GoogleCredentials
    /// Where they were found: `--service-account-key PATH`, or ADC's origin.
    let origin: String
    /// How tokens are made.
    let tokens: String

    /// `service_account sa@p.iam.gserviceaccount.com (from /path)` and how tokens are made.
    var summary: String { "\(credentials.identity); \(tokens)" }
}
