import ArgumentParser
import AuthRPC
import Foundation
import GoogleAuth
import Logging
import OAuth2

/// `--adc`, `--service-account-key FILE`, `--authorized-user FILE` and how their tokens are made:
/// Google credentials for `call` and `status`, instead of a stored session.
struct GoogleCredentialOptions: ParsableArguments {
    @Flag(
        name: .long,
        help: ArgumentHelp(
            "Use Google's Application Default Credentials: $GOOGLE_APPLICATION_CREDENTIALS, gcloud's application_default_credentials.json, "
                + "then the metadata server when $GCE_METADATA_HOST is set or this is a Google VM."
        )
    )
    var adc = false

    @Option(name: .long, help: ArgumentHelp("A Google service-account key file (JSON).", valueName: "file"))
    var serviceAccountKey: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A Google authorized_user file (JSON), as `gcloud auth application-default login` writes it.",
            valueName: "file"
        )
    )
    var authorizedUser: String?

    @Flag(
        name: .long,
        help:
            "With a service-account key: send self-signed JWTs (audience https://<host>/ of the target) instead of asking its token endpoint."
    )
    var selfSignedJwt = false

    @Option(
        name: .customLong("scope"),
        help: ArgumentHelp(
            "A scope to ask for with Google credentials (repeatable; default \(ServiceConfiguration.googleTestScope); "
                + "with --self-signed-jwt, a scope claim instead of an audience).",
            valueName: "scope"
        )
    )
    var scopes: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Where an authorized user's refresh token is sent (--authorized-user, or --adc finding one; default Google's token endpoint).",
            valueName: "url"
        )
    )
    var userTokenEndpoint: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Act as this service account, impersonated through the IAM Credentials API by the credentials chosen (as gcloud's flag: "
                + "a comma-separated chain, each account allowed to impersonate the next; the last is the one acted as).",
            valueName: "email[,email...]"
        )
    )
    var impersonateServiceAccount: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The IAM Credentials API's base URL for --impersonate-service-account (default https://iamcredentials.googleapis.com).",
            valueName: "url"
        )
    )
    var iamEndpoint: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Send an ID token for this audience (a private Cloud Run service's URL, an IAP client id) instead of an access token: "
                + "from a service-account key, the metadata server, or impersonation.",
            valueName: "audience"
        )
    )
    var idTokenAudience: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The universe of the target's endpoints; Google credentials of another universe (their file's universe_domain) are refused before anything is sent.",
            valueName: "domain"
        )
    )
    var universeDomain: String = GoogleCredentialIdentity.defaultUniverseDomain

    /// The flags that choose Google credentials, for messages.
    static let selectingFlags = "--adc, --service-account-key and --authorized-user"

    /// Whether Google credentials were asked for.
    var isSelected: Bool { adc || serviceAccountKey != nil || authorizedUser != nil }

    /// Whether the stored session is to impersonate a service account (no Google credentials named).
    var impersonatesWithSession: Bool { !isSelected && impersonateServiceAccount != nil }

    func validate() throws {
        guard [adc, serviceAccountKey != nil, authorizedUser != nil].filter({ $0 }).count <= 1 else {
            throw ValidationError("give only one of \(Self.selectingFlags)")
        }
        // --impersonate-service-account alone impersonates with the stored session (`call`).
        if !isSelected && impersonateServiceAccount == nil {
            for (given, flag) in [
                (selfSignedJwt, "--self-signed-jwt"), (!scopes.isEmpty, "--scope"),
                (userTokenEndpoint != nil, "--user-token-endpoint"),
                (idTokenAudience != nil, "--id-token-audience"),
                (universeDomain != GoogleCredentialIdentity.defaultUniverseDomain, "--universe-domain"),
            ] where given {
                throw ValidationError("\(flag) only applies with \(Self.selectingFlags)")
            }
        }
        if !isSelected, selfSignedJwt || userTokenEndpoint != nil {
            throw ValidationError("--self-signed-jwt and --user-token-endpoint only apply with \(Self.selectingFlags)")
        }
        if userTokenEndpoint != nil, serviceAccountKey != nil {
            throw ValidationError(
                "--user-token-endpoint is for an authorized user; a service-account key names its own token endpoint"
            )
        }
        if iamEndpoint != nil, impersonateServiceAccount == nil {
            throw ValidationError("--iam-endpoint only applies with --impersonate-service-account")
        }
        if selfSignedJwt, impersonateServiceAccount != nil || idTokenAudience != nil {
            throw ValidationError(
                "--self-signed-jwt makes access tokens itself; it cannot go with --impersonate-service-account or --id-token-audience"
            )
        }
        if idTokenAudience != nil, !scopes.isEmpty {
            throw ValidationError("--scope does not apply to ID tokens (--id-token-audience)")
        }
        if selfSignedJwt, authorizedUser != nil {
            throw ValidationError("--self-signed-jwt needs a service-account key, not --authorized-user")
        }
    }

    /// The credentials asked for, read now. Only `status` with the metadata server sends a
    /// request (``metadataPrincipal()``); building the provider sends nothing.
    func resolve(logger: Logger, transport: any OAuthTransport) throws(ToolFailure) -> GoogleSelection {
        let scopes = self.scopes.isEmpty ? [ServiceConfiguration.googleTestScope] : self.scopes
        guard impersonateServiceAccount != nil else {
            if let idTokenAudience { return try idTokens(for: idTokenAudience, logger: logger, transport: transport) }
            return try resolve(scopes: scopes, logger: logger, transport: transport)
        }
        // The source asks for what the IAM Credentials API takes; --scope is for the account acted as.
        let source = try resolve(
            scopes: [ImpersonatedServiceAccountCredentials.sourceScope],
            logger: logger,
            transport: transport
        )
        return try impersonating(
            source.credentials,
            origin: source.origin,
            sourceTokens: source.tokens,
            quotaProjectID: source.credentials.identity.quotaProjectID,
            logger: logger,
            transport: transport
        )
    }

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

    /// The IAM Credentials URL of `method` for `email`: under --iam-endpoint, else Google's.
    private func iamURL(_ email: String, _ method: String) throws(ToolFailure) -> URL? {
        guard let iamEndpoint else { return nil }
        guard let base = URL(string: iamEndpoint), base.scheme != nil, base.host != nil, base.query == nil else {
            throw ToolFailure(status: .usage, message: "--iam-endpoint \(iamEndpoint) is not an absolute URL")
        }
        return base.appendingPathComponent("v1/projects/-/serviceAccounts/\(email):\(method)")
    }

    /// Where an impersonation source sends its requests, for `status`.
    private static func shown(_ source: any GoogleTokenSource) -> String {
        if let source = source as? ImpersonatedTokenSource { return GrantRequest.redacted(source.endpoint) }
        if let source = source as? ImpersonatedIDTokenSource { return GrantRequest.redacted(source.endpoint) }
        return source.description
    }

    /// ID tokens for `audience` from the credentials chosen, without impersonation: a
    /// service-account key's JWT bearer grant with target_audience, or what ADC finds.
    private func idTokens(
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

    /// The credentials the selecting flags name, asking for `scopes`.
    private func resolve(
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
                        universeDomain: universeDomain,
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
                    universeDomain: universeDomain,
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
                    universeDomain: universeDomain,
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
                    universeDomain: universeDomain,
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
            return GoogleSelection(credentials: credentials, origin: origin, tokens: Self.grantTokens(key, scopes))
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

    /// How an external_account file's tokens are made: its source, the exchange, the
    /// impersonation.
    private static func federationTokens(_ external: ExternalAccountCredentials, _ scopes: [String]) -> String {
        var text =
            "subject token from \(external.credentialSource) exchanged at \(GrantRequest.redacted(external.tokenURL))"
        if let account = external.impersonatedServiceAccount { text += ", impersonating \(account)" }
        return text + ", scopes: \(scopes.joined(separator: " "))"
    }

    /// What `status` shows of an external_account file: the pool provider, the source's kind and
    /// place, the impersonated service account.
    private static func federationDetails(_ external: ExternalAccountCredentials) -> [String: String] {
        var details = [
            "audience": external.audience,
            "source_kind": external.credentialSource.kind.description,
            "source_location": external.credentialSource.location,
        ]
        if let account = external.impersonatedServiceAccount { details["impersonated_account"] = account }
        return details
    }

    /// A file named on the command line, read by `body`: a file that cannot be read or is not
    /// such a credential is a usage error naming the option, as for `--token-file` and `--ca-cert`.
    private static func readFile<T>(
        _ option: String,
        _ path: String,
        hint: String,
        _ body: () throws(OAuthError) -> T
    ) throws(ToolFailure) -> T {
        do throws(OAuthError) { return try body() } catch {
            throw ToolFailure(status: .usage, message: "\(option): \(error.message)", hint: hint)
        }
    }

    /// `body`, building credentials from a file named on the command line and the other
    /// options: what is left to refuse (a scope, an endpoint) came from the command line.
    private static func commandLine<T>(_ body: () throws(OAuthError) -> T) throws(ToolFailure) -> T {
        do throws(OAuthError) { return try body() } catch { throw ToolFailure(status: .usage, message: error.message) }
    }

    /// `body`, finding or building Application Default Credentials: a failure says what was
    /// found, or looked at, in the environment.
    private static func setUp<T>(_ body: () throws(OAuthError) -> T) throws(ToolFailure) -> T {
        do throws(OAuthError) { return try body() } catch { throw Failures.googleSetup(error) }
    }

    private static func grantTokens(_ key: ServiceAccountKey, _ scopes: [String]) -> String {
        "JWT bearer grant at \(GrantRequest.redacted(key.tokenURI)), scopes: \(scopes.joined(separator: " "))"
    }

    private static func refreshTokens(_ endpoint: URL) -> String {
        "refresh-token grant at \(GrantRequest.redacted(endpoint))"
    }

    private static func selfSignedTokens(_ scopes: [String]) -> String {
        scopes.isEmpty
            ? "self-signed JWTs, audience https://<host>/ of the target"
            : "self-signed JWTs, scope claim: \(scopes.joined(separator: " "))"
    }

    private func userEndpoint() throws(ToolFailure) -> URL {
        guard let userTokenEndpoint else { return AuthorizedUserTokenSource.googleTokenEndpoint }
        guard let url = URL(string: userTokenEndpoint), url.scheme != nil, url.host != nil else {
            throw ToolFailure(
                status: .usage,
                message: "--user-token-endpoint \(userTokenEndpoint) is not an absolute URL"
            )
        }
        return url
    }
}

/// Google credentials read from the command line or the environment, and what to say about them.
struct GoogleSelection {
    let credentials: GoogleCredentials
    /// How they were found: `--service-account-key PATH`, `--authorized-user PATH`, or
    /// `Application Default Credentials: ` and ADC's origin.
    let origin: String
    /// How tokens are made.
    let tokens: String
    /// The metadata server, when the credentials are the instance's.
    var metadataHost: String? = nil
    /// For identity federation: `audience`, `source_kind`, `source_location` and
    /// `impersonated_account` (when there is one); empty for the other kinds.
    var federation: [String: String] = [:]

    /// The account the metadata server names (for `status`; a call's server reports it itself).
    func metadataPrincipal(logger: Logger) async -> Result<String, OAuthError>? {
        guard let metadataHost else { return nil }
        do throws(OAuthError) {
            return .success(
                try await ComputeEngineTokenSource(host: metadataHost, logger: logger).serviceAccountEmail()
            )
        } catch {
            return .failure(error)
        }
    }
}
