import AuthRPCSystem
public import Foundation
public import Logging
public import OAuth2

/// Application Default Credentials: the credential a program finds in its environment, looked
/// for in the order Google's libraries use.
///
/// 1. `GOOGLE_APPLICATION_CREDENTIALS`: the credential file it names (a service account's key,
///    gcloud's authorized_user or impersonated_service_account, an external_account file of
///    workload or workforce identity federation, or a workforce pool user's
///    external_account_authorized_user). Set but
///    unreadable or unusable is an error, not a reason to look further.
/// 2. gcloud's well-known file: `$CLOUDSDK_CONFIG/application_default_credentials.json`, or
///    `$HOME/.config/gcloud/application_default_credentials.json`.
/// 3. The Compute Engine metadata server, only when `GCE_METADATA_HOST` names it or the machine
///    says it is a Google VM (its DMI product name, `/sys/class/dmi/id/product_name` on Linux,
///    starts with `Google`). Then at `GCE_METADATA_HOST`, else `metadata.google.internal`.
///
/// Resolving reads the environment and files only: no request leaves the process, and the
/// link-local metadata address is never probed. When nothing applies, the error lists each place
/// tried and why it did not apply. `GOOGLE_CLOUD_QUOTA_PROJECT`, when set, names the project billed
/// for the calls whatever the credential (as google-auth does), and `GOOGLE_CLOUD_UNIVERSE_DOMAIN`
/// the universe of the endpoints the calls go to (as Google's client libraries read it).
///
/// ``GoogleCredentials/applicationDefault(scopes:environment:userTokenEndpoint:transport:expiryTolerance:refreshBackoff:universeDomain:logger:)``
/// turns what is found into a call's token provider.
public enum ApplicationDefaultCredentials {
    /// What resolution looks at: environment variables and the DMI product-name file.
    public struct Environment: Sendable {
        /// The environment variables (`GOOGLE_APPLICATION_CREDENTIALS`, `CLOUDSDK_CONFIG`, `HOME`,
        /// `GCE_METADATA_HOST`, `GOOGLE_CLOUD_QUOTA_PROJECT`, `GOOGLE_CLOUD_UNIVERSE_DOMAIN`).
        public var variables: [String: String]
        /// The file whose text says whether this machine is a Google VM.
        public var productNamePath: String

        /// Where Linux exposes the DMI product name.
        public static let linuxProductNamePath = "/sys/class/dmi/id/product_name"

        /// Creates an environment.
        public init(variables: [String: String], productNamePath: String = linuxProductNamePath) {
            self.variables = variables
            self.productNamePath = productNamePath
        }

        /// This process's environment and the real product-name file.
        public static var current: Environment {
            Environment(variables: ProcessInfo.processInfo.environment)
        }

        /// A variable's value; an empty one counts as unset.
        func value(_ name: String) -> String? {
            variables[name].flatMap { $0.isEmpty ? nil : $0 }
        }
    }

    /// A credential found: a service account's key, a user's gcloud credentials, workload or
    /// workforce identity federation, a workforce pool user's credentials, or the metadata server.
    /// ``Resolved/identity`` says which kind; the properties below hold what it is made of.
    ///
    /// A struct rather than an enum so that later versions can find more kinds (impersonated
    /// service accounts, X.509 workload certificates, ...) without breaking code that reads it.
    public struct Credential: Sendable, CustomStringConvertible {
        enum Wrapped: Sendable {
            case serviceAccount(ServiceAccountKey)
            case authorizedUser(AuthorizedUserCredentials)
            case computeEngine(metadataHost: String)
            indirect case impersonated(ImpersonatedServiceAccountCredentials)
            case externalAccount(ExternalAccountCredentials)
            case externalAccountAuthorizedUser(ExternalAccountAuthorizedUserCredentials)
        }

        let wrapped: Wrapped

        private init(_ wrapped: Wrapped) {
            self.wrapped = wrapped
        }

        static func serviceAccount(_ key: ServiceAccountKey) -> Self {
            Self(.serviceAccount(key))
        }

        static func authorizedUser(_ credentials: AuthorizedUserCredentials) -> Self {
            Self(.authorizedUser(credentials))
        }

        static func computeEngine(metadataHost: String) -> Self {
            Self(.computeEngine(metadataHost: metadataHost))
        }

        static func impersonated(_ credentials: ImpersonatedServiceAccountCredentials) -> Self {
            Self(.impersonated(credentials))
        }

        /// The impersonation, for an impersonated_service_account file; `nil` for the other kinds.
        public var impersonatedServiceAccount: ImpersonatedServiceAccountCredentials? {
            if case .impersonated(let credentials) = wrapped { return credentials }
            return nil
        }

        static func externalAccount(_ credentials: ExternalAccountCredentials) -> Self {
            Self(.externalAccount(credentials))
        }

        static func externalAccountAuthorizedUser(_ credentials: ExternalAccountAuthorizedUserCredentials) -> Self {
            Self(.externalAccountAuthorizedUser(credentials))
        }

        /// The key, for a service account's key file; `nil` for the other kinds.
        public var serviceAccountKey: ServiceAccountKey? {
            if case .serviceAccount(let key) = wrapped { return key }
            return nil
        }

        /// The user's credentials, for gcloud's authorized_user file; `nil` for the other kinds.
        public var authorizedUserCredentials: AuthorizedUserCredentials? {
            if case .authorizedUser(let credentials) = wrapped { return credentials }
            return nil
        }

        /// The metadata server's `HOST[:PORT]`, for Compute Engine; `nil` for the other kinds.
        public var metadataHost: String? {
            if case .computeEngine(let host) = wrapped { return host }
            return nil
        }

        /// The federation credentials, for an external_account file; `nil` for the other kinds.
        public var externalAccountCredentials: ExternalAccountCredentials? {
            if case .externalAccount(let credentials) = wrapped { return credentials }
            return nil
        }

        /// The workforce pool user's credentials, for an external_account_authorized_user file;
        /// `nil` for the other kinds.
        public var externalAccountAuthorizedUserCredentials: ExternalAccountAuthorizedUserCredentials? {
            if case .externalAccountAuthorizedUser(let credentials) = wrapped { return credentials }
            return nil
        }

        /// The credential, without secrets.
        public var description: String {
            switch wrapped {
            case .serviceAccount(let key): return key.description
            case .authorizedUser(let credentials): return credentials.description
            case .computeEngine(let host): return "the Compute Engine metadata server at \(host)"
            case .impersonated(let credentials): return credentials.description
            case .externalAccount(let credentials): return credentials.description
            case .externalAccountAuthorizedUser(let credentials): return credentials.description
            }
        }
    }

    /// Where a credential was found.
    public enum Origin: Sendable, Hashable, CustomStringConvertible {
        /// The file named by `GOOGLE_APPLICATION_CREDENTIALS`.
        case environmentVariable(path: String)
        /// gcloud's well-known file.
        case wellKnownFile(path: String)
        /// The metadata server; `reason` says why it was used (`GCE_METADATA_HOST is set`, ...).
        case metadataServer(reason: String)

        /// The path and what named it, or why the metadata server was used.
        public var description: String {
            switch self {
            case .environmentVariable(let path): return "\(path) (GOOGLE_APPLICATION_CREDENTIALS)"
            case .wellKnownFile(let path): return "\(path) (gcloud's application default credentials)"
            case .metadataServer(let reason): return "the metadata server (\(reason))"
            }
        }
    }

    /// What resolution found.
    public struct Resolved: Sendable, CustomStringConvertible {
        /// The credential.
        public var credential: Credential
        /// Where it was found.
        public var origin: Origin
        /// The project billed for the calls (`x-goog-user-project`): `GOOGLE_CLOUD_QUOTA_PROJECT`
        /// when set, else the credential's own (an authorized_user file's `quota_project_id`).
        public var quotaProjectID: String?
        /// The universe of the endpoints the calls go to, as `GOOGLE_CLOUD_UNIVERSE_DOMAIN` names
        /// it (lowercased); `nil` when it is not set. Not the credential's own universe
        /// (``identity``'s ``GoogleCredentialIdentity/universeDomain``): ``GoogleCredentials``
        /// refuses a credential whose universe differs from this one.
        public var universeDomain: String?
        /// The environment variables resolution saw: an external_account source reads its own
        /// from them (`GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES`, AWS's).
        let variables: [String: String]

        init(
            credential: Credential,
            origin: Origin,
            quotaProjectOverride: String?,
            universeDomain: String? = nil,
            variables: [String: String]
        ) {
            self.credential = credential
            self.origin = origin
            self.universeDomain = universeDomain
            self.variables = variables
            quotaProjectID = quotaProjectOverride ?? Self.identity(of: credential).quotaProjectID
        }

        /// Who the credential acts as (for Compute Engine, `default` until the server is asked),
        /// with ``quotaProjectID``.
        public var identity: GoogleCredentialIdentity {
            var identity = Self.identity(of: credential)
            identity.quotaProjectID = quotaProjectID
            return identity
        }

        private static func identity(of credential: Credential) -> GoogleCredentialIdentity {
            switch credential.wrapped {
            case .serviceAccount(let key): return key.identity
            case .authorizedUser(let credentials): return credentials.identity
            case .computeEngine(let host):
                return GoogleCredentialIdentity(
                    kind: .computeEngine,
                    principal: "default",
                    source: "metadata server at \(host)"
                )
            case .impersonated(let impersonation):
                let sourceIdentity = identity(of: impersonation.sourceCredential)
                var identity = GoogleCredentialIdentity(
                    kind: .impersonatedServiceAccount,
                    principal: impersonation.targetPrincipal,
                    source: impersonation.source,
                    quotaProjectID: impersonation.quotaProjectID ?? sourceIdentity.quotaProjectID
                )
                identity.chain =
                    [sourceIdentity.principal] + impersonation.delegates.map(ServiceAccountName.email(ofDelegate:))
                    + [impersonation.targetPrincipal]
                identity.universeDomain = sourceIdentity.universeDomain
                return identity
            case .externalAccount(let credentials): return credentials.identity
            case .externalAccountAuthorizedUser(let credentials): return credentials.identity
            }
        }

        /// A source of access tokens for this credential: the JWT bearer grant for a service
        /// account, the refresh-token grant for a user, the metadata server for Compute Engine,
        /// IAM Credentials' `generateAccessToken` for an impersonated service account (its source
        /// asking for the `cloud-platform` scope; `scopes` empty asks for `cloud-platform` too),
        /// the subject token exchanged at the Security Token Service (then impersonation, if the
        /// file says) for an external_account file, the refresh-token grant at the file's
        /// `token_url` for a workforce pool user.
        ///
        /// - Parameters:
        ///   - scopes: The scopes to ask for (a service account needs at least one; a user's
        ///     refresh token keeps the scopes it was granted; empty asks the metadata server for
        ///     the instance's own, and an external account for `cloud-platform`).
        ///   - userTokenEndpoint: Where a user's refresh goes: Google's token endpoint, whatever
        ///     the file says.
        ///   - transport: How token requests are sent.
        ///   - logger: Where token requests are logged (never a token or secret).
        /// - Throws: ``/OAuth2/OAuthError/Kind/invalidConfiguration`` as the sources' initializers do.
        public func tokenSource(
            scopes: [String],
            userTokenEndpoint: URL = AuthorizedUserTokenSource.googleTokenEndpoint,
            transport: any OAuthTransport = HTTP1OAuthTransport.standard,
            logger: Logger = Logger(label: "swift-authrpc.google")
        ) throws(OAuthError) -> any GoogleTokenSource {
            switch credential.wrapped {
            case .serviceAccount(let key):
                return try ServiceAccountTokenSource(key: key, scopes: scopes, transport: transport, logger: logger)
            case .authorizedUser(let credentials):
                return try AuthorizedUserTokenSource(
                    credentials: credentials,
                    tokenEndpoint: userTokenEndpoint,
                    transport: transport,
                    logger: logger
                )
            case .computeEngine(let host):
                return try ComputeEngineTokenSource(host: host, scopes: scopes, transport: transport, logger: logger)
            case .impersonated(let impersonation):
                return try ImpersonatedTokenSource(
                    source: impersonationSource(impersonation, userTokenEndpoint, transport, logger),
                    targetPrincipal: impersonation.targetPrincipal,
                    delegates: impersonation.delegates,
                    scopes: scopes.isEmpty ? [ImpersonatedServiceAccountCredentials.sourceScope] : scopes,
                    endpoint: impersonation.impersonationURL,
                    transport: transport,
                    logger: logger
                )
            case .externalAccount(let credentials):
                return try ExternalAccountTokenSource(
                    credentials: credentials,
                    scopes: scopes,
                    environment: variables,
                    transport: transport,
                    logger: logger
                )
            case .externalAccountAuthorizedUser(let credentials):
                return ExternalAccountAuthorizedUserTokenSource(
                    credentials: credentials,
                    transport: transport,
                    logger: logger
                )
            }
        }

        /// The credential's identity and where it was found.
        public var description: String {
            "\(identity.kind.rawValue) \(identity.principal) from \(origin)"
        }
    }

    /// Each place looked at and why it did not apply: the `underlying` of the error thrown when
    /// nothing was found.
    public struct SearchReport: Error, Sendable, CustomStringConvertible {
        /// One place and its outcome.
        public struct Attempt: Sendable, Hashable {
            /// The place (`GOOGLE_APPLICATION_CREDENTIALS`, a path, the metadata server).
            public var place: String
            /// Why it did not apply.
            public var outcome: String

            /// Creates an attempt.
            public init(place: String, outcome: String) {
                self.place = place
                self.outcome = outcome
            }
        }

        /// The places, in the order they were tried.
        public var attempts: [Attempt]

        /// One line per place.
        public var description: String {
            attempts.enumerated().map { "\($0.offset + 1). \($0.element.place): \($0.element.outcome)" }.joined(
                separator: "\n"
            )
        }
    }

    /// The variable naming the universe of the endpoints the calls go to.
    public static let universeDomainVariable = "GOOGLE_CLOUD_UNIVERSE_DOMAIN"

    /// The name of gcloud's well-known file.
    public static let wellKnownFileName = "application_default_credentials.json"

    /// Finds the credential `environment` points to.
    ///
    /// - Throws: ``/OAuth2/OAuthError/Kind/invalidConfiguration``: when a file that was found (or named
    ///   by `GOOGLE_APPLICATION_CREDENTIALS`) cannot be read or used, when
    ///   `GOOGLE_CLOUD_QUOTA_PROJECT` or `GOOGLE_CLOUD_UNIVERSE_DOMAIN` is set to something unusable
    ///   (an empty universe, a URL, not a domain name), or when nothing was found;
    ///   then the message lists every place tried and why it did not apply, and `underlying` is
    ///   a ``SearchReport``.
    public static func resolve(in environment: Environment = .current) throws(OAuthError) -> Resolved {
        let (credential, origin) = try find(in: environment)
        var quotaProject: String?
        if let value = environment.value("GOOGLE_CLOUD_QUOTA_PROJECT") {
            guard QuotaProject.isValid(value) else {
                throw OAuthError(
                    .invalidConfiguration,
                    "GOOGLE_CLOUD_QUOTA_PROJECT is not a project id (printable ASCII, no spaces, at most 128 characters)"
                )
            }
            quotaProject = value
        }
        // Set but empty is an error here, as in Google's client libraries: it names no universe.
        let universe = try environment.variables[universeDomainVariable].map { (value) throws(OAuthError) in
            try UniverseDomain.validated(value, from: universeDomainVariable)
        }
        return Resolved(
            credential: credential,
            origin: origin,
            quotaProjectOverride: quotaProject,
            universeDomain: universe,
            variables: environment.variables
        )
    }

    /// The credential and where it was found, in Google's order.
    private static func find(in environment: Environment) throws(OAuthError) -> (Credential, Origin) {
        var attempts: [SearchReport.Attempt] = []

        if let path = environment.value("GOOGLE_APPLICATION_CREDENTIALS") {
            return (
                try credential(inFile: path, purpose: "GOOGLE_APPLICATION_CREDENTIALS"),
                .environmentVariable(path: path)
            )
        }
        attempts.append(.init(place: "GOOGLE_APPLICATION_CREDENTIALS", outcome: "not set"))

        let wellKnown = wellKnownFilePath(in: environment)
        switch wellKnown {
        case .path(let path) where FileManager.default.fileExists(atPath: path):
            return (try credential(inFile: path, purpose: "gcloud's well-known file"), .wellKnownFile(path: path))
        case .path(let path):
            attempts.append(.init(place: "gcloud's well-known file \(path)", outcome: "no such file"))
        case .unknown(let why):
            attempts.append(.init(place: "gcloud's well-known file", outcome: why))
        }

        if let host = environment.value("GCE_METADATA_HOST") {
            guard ServiceHost.host(ofAuthority: host) != nil else {
                throw OAuthError(
                    .invalidConfiguration,
                    "GCE_METADATA_HOST is \"\(host.prefix(100))\", not HOST or HOST:PORT"
                )
            }
            return (.computeEngine(metadataHost: host), .metadataServer(reason: "GCE_METADATA_HOST is set"))
        }
        switch googleVMMarker(at: environment.productNamePath) {
        case .google(let name):
            return (
                .computeEngine(metadataHost: ComputeEngineTokenSource.defaultHost),
                .metadataServer(reason: "\(environment.productNamePath) says \(name)")
            )
        case .notGoogle(let why):
            attempts.append(
                .init(
                    place: "the Compute Engine metadata server",
                    outcome:
                        "GCE_METADATA_HOST is not set and this is not a Google VM (\(why)); the link-local address is never probed"
                )
            )
        }

        let report = SearchReport(attempts: attempts)
        throw OAuthError(
            .invalidConfiguration,
            "no Google Application Default Credentials found. Tried:\n\(report)\nSet GOOGLE_APPLICATION_CREDENTIALS to a key file, or run `gcloud auth application-default login`.",
            underlying: report
        )
    }

    /// The credential in the file at `path`, by its `type`.
    static func credential(inFile path: String, purpose: String) throws(OAuthError) -> Credential {
        let file: CredentialFile
        do {
            file = try CredentialFile(contentsOfFile: path)
        } catch {
            if let failure = error.underlying as? BoundedFile.Failure, failure.reason == .notFound {
                throw OAuthError(.invalidConfiguration, "\(purpose) names \(path), which does not exist")
            }
            throw OAuthError(.invalidConfiguration, "\(purpose): \(error.message)")
        }
        let type = try file.type()
        switch type {
        case "service_account":
            return .serviceAccount(try ServiceAccountKey(file, source: path))
        case "authorized_user":
            return .authorizedUser(try AuthorizedUserCredentials(file, source: path))
        case "impersonated_service_account":
            return .impersonated(try ImpersonatedServiceAccountCredentials(file, source: path))
        case ExternalAccountCredentials.fileType:
            return .externalAccount(try ExternalAccountCredentials(file, source: path))
        case ExternalAccountAuthorizedUserCredentials.fileType:
            return .externalAccountAuthorizedUser(try ExternalAccountAuthorizedUserCredentials(file, source: path))
        default:
            throw OAuthError(
                .invalidConfiguration,
                "\(path) (\(purpose)) holds a \(CredentialFile.shown(type: type, quoted: true)) credential; supported: service_account, authorized_user, impersonated_service_account, external_account, external_account_authorized_user"
            )
        }
    }

    private enum WellKnownFile {
        case path(String)
        case unknown(String)
    }

    private static func wellKnownFilePath(in environment: Environment) -> WellKnownFile {
        if let config = environment.value("CLOUDSDK_CONFIG") {
            return .path((config as NSString).appendingPathComponent(wellKnownFileName))
        }
        guard let home = environment.value("HOME") else {
            return .unknown("neither CLOUDSDK_CONFIG nor HOME is set")
        }
        return .path(
            ((home as NSString).appendingPathComponent(".config/gcloud") as NSString).appendingPathComponent(
                wellKnownFileName
            )
        )
    }

    private enum GoogleVMMarker {
        case google(String)
        case notGoogle(String)
    }

    /// What the product-name file says (a regular file of at most 4 KiB: sysfs files say they
    /// are one page). Google's libraries call a machine whose DMI product name starts with
    /// `Google` a Google VM.
    private static func googleVMMarker(at path: String) -> GoogleVMMarker {
        let bytes: SecretBytes
        do {
            bytes = try BoundedFile.read(path, limit: 4096)
        } catch {
            return .notGoogle("\(path) cannot be read: \(error)")
        }
        let name = bytes.withUnsafeBytes { String(decoding: $0.prefix(256), as: UTF8.self) }
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let shown = name.prefix(64).filter { !$0.isNewline }
        return name.hasPrefix("Google") ? .google("\"\(shown)\"") : .notGoogle("\(path) says \"\(shown)\"")
    }
}
