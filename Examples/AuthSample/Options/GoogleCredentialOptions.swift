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
            "The universe of the target's endpoints (default: GOOGLE_CLOUD_UNIVERSE_DOMAIN, else googleapis.com); Google credentials of another universe (their file's universe_domain, the metadata server's) are refused before a token is sent.",
            valueName: "domain"
        )
    )
    var universeDomain: String?

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
                (universeDomain != nil, "--universe-domain"),
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
}
