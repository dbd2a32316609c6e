public import Foundation
public import Logging
public import OAuth2

extension ApplicationDefaultCredentials.Resolved {
    /// A source of ID tokens for `audience` from this credential, for a private Cloud Run or
    /// IAP-fronted service: a service account's key through the JWT bearer grant with
    /// `target_audience` (``ServiceAccountIDTokenSource``), the metadata server's `identity`
    /// endpoint (``ComputeEngineIDTokenSource``), or IAM Credentials' `generateIdToken` for an
    /// impersonated service account (``ImpersonatedIDTokenSource``). Hold it in
    /// ``GoogleCredentials`` as any source.
    ///
    /// - Parameters:
    ///   - audience: The receiving service's URL (Cloud Run) or OAuth client id (IAP).
    ///   - userTokenEndpoint: Where an impersonating user's refresh goes: Google's by default.
    ///   - transport: How requests are sent.
    ///   - logger: Where requests are logged (never a token).
    /// - Throws: ``/OAuth2/OAuthError/Kind/invalidConfiguration`` for a user's authorized_user or
    ///   external_account_authorized_user credentials (Google issues them no ID tokens for an
    ///   audience: impersonate a service account instead), for an external_account file (not
    ///   supported here: impersonate a service account with it), or an audience that cannot be used.
    public func idTokenSource(
        audience: String,
        userTokenEndpoint: URL = AuthorizedUserTokenSource.googleTokenEndpoint,
        transport: any OAuthTransport = HTTP1OAuthTransport.standard,
        logger: Logger = Logger(label: "swift-authrpc.google")
    ) throws(OAuthError) -> any GoogleTokenSource {
        switch credential.wrapped {
        case .serviceAccount(let key):
            return try ServiceAccountIDTokenSource(key: key, audience: audience, transport: transport, logger: logger)
        case .computeEngine(let host):
            return try ComputeEngineIDTokenSource(audience: audience, host: host, transport: transport, logger: logger)
        case .impersonated(let impersonation):
            return try ImpersonatedIDTokenSource(
                source: impersonationSource(impersonation, userTokenEndpoint, transport, logger),
                targetPrincipal: impersonation.targetPrincipal,
                delegates: impersonation.delegates,
                audience: audience,
                endpoint: impersonation.idTokenURL,
                transport: transport,
                logger: logger
            )
        case .authorizedUser, .externalAccountAuthorizedUser:
            throw OAuthError(
                .invalidConfiguration,
                "a user's \(identity.kind.rawValue) credentials cannot get ID tokens for an audience; impersonate a service account (gcloud auth application-default login --impersonate-service-account EMAIL)"
            )
        case .externalAccount:
            throw OAuthError(
                .invalidConfiguration,
                "ID tokens from an external_account file are not supported here; impersonate a service account with it (auth_sample --impersonate-service-account EMAIL)"
            )
        }
    }

    /// The credential an impersonated_service_account file impersonates with: its source, asking
    /// for the scope the IAM Credentials API takes, in its own universe (the impersonation's
    /// universe is the source's, checked where the impersonated credentials are used).
    func impersonationSource(
        _ impersonation: ImpersonatedServiceAccountCredentials,
        _ userTokenEndpoint: URL,
        _ transport: any OAuthTransport,
        _ logger: Logger
    ) throws(OAuthError) -> GoogleCredentials {
        let source = ApplicationDefaultCredentials.Resolved(
            credential: impersonation.sourceCredential,
            origin: origin,
            quotaProjectOverride: nil,
            variables: variables
        )
        return try GoogleCredentials(
            source,
            scopes: [ImpersonatedServiceAccountCredentials.sourceScope],
            userTokenEndpoint: userTokenEndpoint,
            transport: transport,
            universeDomain: source.identity.universeDomain,
            logger: logger
        )
    }
}

extension GoogleCredentials {
    /// ID tokens for `audience` from this environment's Application Default Credentials
    /// (``ApplicationDefaultCredentials/Resolved/idTokenSource(audience:userTokenEndpoint:transport:logger:)``),
    /// as a call's token provider: each call to the private Cloud Run or IAP-fronted service
    /// carries `Authorization: Bearer <ID token>`, renewed before its `exp`.
    ///
    /// - Throws: ``/OAuth2/OAuthError/Kind/invalidConfiguration`` when nothing is found, for a
    ///   user's credentials, or for an audience that cannot be used.
    public static func applicationDefaultIDTokens(
        audience: String,
        environment: ApplicationDefaultCredentials.Environment = .current,
        userTokenEndpoint: URL = AuthorizedUserTokenSource.googleTokenEndpoint,
        transport: any OAuthTransport = HTTP1OAuthTransport.standard,
        logger: Logger = Logger(label: "swift-authrpc.google")
    ) throws(OAuthError) -> GoogleCredentials {
        let resolved = try ApplicationDefaultCredentials.resolve(in: environment)
        return try GoogleCredentials(
            source: resolved.idTokenSource(
                audience: audience,
                userTokenEndpoint: userTokenEndpoint,
                transport: transport,
                logger: logger
            ),
            quotaProjectID: resolved.quotaProjectID,
            logger: logger
        )
    }
}
