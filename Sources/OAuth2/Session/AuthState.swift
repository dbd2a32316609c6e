public import Foundation

/// Everything a session needs to keep producing access tokens, and to do so again after a
/// restart: the endpoints, the client, the scopes, the record of the grant, the tokens and the
/// last authorization error.
///
/// `AuthState` is `Codable` and versioned (``currentVersion``); ``encoded()`` and
/// ``init(decoding:)`` give the JSON form the stores write. Version 1 files may lack the grant's
/// `id` (written before it existed): they are read as they are, with an identifier derived from
/// the grant (``GrantRecord/legacyID(type:date:)``), and readers that predate it ignore it. Its
/// `description` never shows a token or the client secret.
public struct AuthState: Sendable, Codable, CustomStringConvertible {
    /// The version of the serialized form this library writes.
    public static let currentVersion = 1

    /// The authorization server's endpoints.
    public var configuration: ServiceConfiguration
    /// The client the tokens were issued to.
    public var client: OAuthClient
    /// The scopes asked for.
    public var scopes: [String]
    /// How the grant was obtained.
    public var grant: GrantRecord

    /// The current access token.
    public var accessToken: String?
    /// When the access token expires; `nil` when the server did not say.
    public var accessTokenExpiresAt: Date?
    /// When the access token was received (its lifetime is `accessTokenExpiresAt - accessTokenIssuedAt`).
    public var accessTokenIssuedAt: Date?
    /// The refresh token.
    public var refreshToken: String?
    /// The OpenID Connect ID token (a JWT), when the grant included `openid`.
    public var idToken: String?
    /// The scopes the server granted, when it said; otherwise the requested ones apply.
    public var grantedScopes: [String]?
    /// The token type the server named (`Bearer`).
    public var tokenType: String?
    /// Set after a server rejected the access token: the next use refreshes whatever the expiry says.
    public var isAccessTokenStale: Bool
    /// The authorization error that stopped this session; `nil` while it is usable.
    public var authorizationError: AuthorizationErrorRecord?

    /// Creates a state from a token response's parts.
    public init(
        configuration: ServiceConfiguration,
        client: OAuthClient,
        scopes: [String],
        grant: GrantRecord,
        accessToken: String? = nil,
        accessTokenExpiresAt: Date? = nil,
        accessTokenIssuedAt: Date? = nil,
        refreshToken: String? = nil,
        idToken: String? = nil,
        grantedScopes: [String]? = nil,
        tokenType: String? = nil,
        isAccessTokenStale: Bool = false,
        authorizationError: AuthorizationErrorRecord? = nil
    ) {
        self.configuration = configuration
        self.client = client
        self.scopes = scopes
        self.grant = grant
        self.accessToken = accessToken
        self.accessTokenExpiresAt = accessTokenExpiresAt
        self.accessTokenIssuedAt = accessTokenIssuedAt
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.grantedScopes = grantedScopes
        self.tokenType = tokenType
        self.isAccessTokenStale = isAccessTokenStale
        self.authorizationError = authorizationError
    }

    /// A state holding only a refresh token obtained elsewhere (another tool, a migration): the
    /// first use refreshes it.
    public init(
        importingRefreshToken refreshToken: String,
        configuration: ServiceConfiguration,
        client: OAuthClient,
        scopes: [String]
    ) {
        self.init(
            configuration: configuration,
            client: client,
            scopes: scopes,
            grant: GrantRecord(type: .refreshTokenImport),
            refreshToken: refreshToken
        )
    }

    /// The scopes in force: the granted ones when the server said, else the requested ones.
    public var effectiveScopes: [String] { grantedScopes ?? scopes }

    /// `true` while the session is not stopped by an authorization error and has a way to get a
    /// token (an access token, a refresh token, or a client-credentials grant).
    public var isAuthorized: Bool {
        authorizationError == nil && (accessToken != nil || refreshToken != nil || grant.type == .clientCredentials)
    }

    /// Whether the access token can be used at `now`: present, something a Bearer header can
    /// carry (an RFC 6750 `b64token` of at most 16 KiB, whatever a stored file says), not marked
    /// stale, and expiring more than a margin from now. The margin is `tolerance`, but at most
    /// half the token's lifetime, so a server that issues short-lived tokens (under two minutes)
    /// does not make every use a refresh. A token without an expiry is fresh.
    public func isAccessTokenFresh(at now: Date = Date(), tolerance: Duration = .seconds(60)) -> Bool {
        guard let accessToken, !isAccessTokenStale, TokenSyntax.isBearerToken(accessToken) else { return false }
        guard let expiresAt = accessTokenExpiresAt else { return true }
        return expiresAt.timeIntervalSince(now) > refreshMargin(tolerance: tolerance)
    }

    /// The moment the access token stops being fresh; `nil` without an expiry.
    func freshUntil(tolerance: Duration) -> Date? {
        ExpiryMargin.freshUntil(issuedAt: accessTokenIssuedAt, expiresAt: accessTokenExpiresAt, tolerance: tolerance)
    }

    private func refreshMargin(tolerance: Duration) -> TimeInterval {
        ExpiryMargin.seconds(tolerance: tolerance, issuedAt: accessTokenIssuedAt, expiresAt: accessTokenExpiresAt)
    }

    /// Takes in a successful (checked) token response: a rotated refresh token replaces the old
    /// one, an absent one keeps it; the stale mark and any authorization error are cleared.
    mutating func apply(_ response: TokenResponse, receivedAt: Date) {
        accessToken = response.accessToken
        accessTokenIssuedAt = receivedAt
        accessTokenExpiresAt = response.expiresIn.map { receivedAt.addingTimeInterval($0) }
        if let refreshToken = response.refreshToken { self.refreshToken = refreshToken }
        if let idToken = response.idToken { self.idToken = idToken }
        if let scopes = response.scopes { grantedScopes = scopes }
        tokenType = response.tokenType
        isAccessTokenStale = false
        authorizationError = nil
    }

    /// What can be shown: the client id, scopes, grant, expiry and which tokens are present.
    public var description: String {
        var parts = [
            "client: \(client.id)", "scopes: \(effectiveScopes.joined(separator: " "))",
            "grant: \(grant.type.rawValue)",
        ]
        parts.append("accessToken: \(accessToken == nil ? "none" : "<redacted>")")
        if let accessTokenExpiresAt { parts.append("expires: \(accessTokenExpiresAt)") }
        parts.append("refreshToken: \(refreshToken == nil ? "none" : "<redacted>")")
        if isAccessTokenStale { parts.append("stale") }
        if let authorizationError { parts.append("error: \(authorizationError.code)") }
        return "AuthState(\(parts.joined(separator: ", ")))"
    }
}

/// How a session's grant was obtained, and which grant it is.
public struct GrantRecord: Sendable, Hashable, Codable {
    /// The kinds of grant.
    ///
    /// A struct rather than an enum so that later versions can add ways of signing in (a token
    /// exchange, a JWT bearer grant) without breaking code that compares them. It is stored as
    /// its ``rawValue``.
    public struct GrantType: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
        enum Wrapped: String, Sendable, Hashable {
            case authorizationCode = "authorization_code"
            case deviceCode = "device_code"
            case clientCredentials = "client_credentials"
            case refreshTokenImport = "refresh_token_import"
            case gtmOAuth2Migration = "gtm_oauth2_migration"
        }

        let wrapped: Wrapped

        private init(_ wrapped: Wrapped) {
            self.wrapped = wrapped
        }

        /// Authorization code with PKCE, through a loopback redirect (RFC 8252).
        public static let authorizationCode = Self(.authorizationCode)
        /// Device authorization (RFC 8628).
        public static let deviceCode = Self(.deviceCode)
        /// Client credentials: the client acts for itself; renewed by asking again.
        public static let clientCredentials = Self(.clientCredentials)
        /// A refresh token obtained elsewhere.
        public static let refreshTokenImport = Self(.refreshTokenImport)
        /// Migrated from a GTMOAuth2 keychain string.
        public static let gtmOAuth2Migration = Self(.gtmOAuth2Migration)

        /// The name stored in session files: `authorization_code`, `device_code`,
        /// `client_credentials`, `refresh_token_import`, `gtm_oauth2_migration`.
        public var rawValue: String { wrapped.rawValue }

        /// The grant type named `rawValue`, or `nil` for one this version does not know
        /// (decoding a session file that names one fails).
        public init?(rawValue: String) {
            guard let wrapped = Wrapped(rawValue: rawValue) else { return nil }
            self.init(wrapped)
        }

        /// The name stored in session files (``rawValue``).
        public var description: String { rawValue }
    }

    /// The kind of grant.
    public var type: GrantType
    /// When it was obtained.
    public var date: Date
    /// The redirect URI used (authorization code grants).
    public var redirectURI: String?
    /// Which sign-in this is: a new random identifier for every grant, kept across refreshes.
    /// A session refreshing under a shared store's lock compares it with the stored one, so a
    /// sign-in saved meanwhile by another process is adopted rather than overwritten.
    ///
    /// Session files written before it existed have none; it is then derived from the grant's
    /// type and date (``legacyID(type:date:)``), so every process reading the same old file
    /// agrees on it.
    public var id: String

    /// Creates a record; `id` is a new random identifier unless given.
    public init(type: GrantType, date: Date = Date(), redirectURI: String? = nil, id: String = UUID().uuidString) {
        self.type = type
        self.date = date
        self.redirectURI = redirectURI
        self.id = id
    }

    /// The identifier of a grant read from a file that has none: its type and the second it was
    /// obtained (the precision the file keeps), the same for every reader.
    public static func legacyID(type: GrantType, date: Date) -> String {
        "legacy-\(type.rawValue)-\(Int64(date.timeIntervalSince1970.rounded(.down)))"
    }

    private enum CodingKeys: String, CodingKey {
        case type, date, redirectURI, id
    }

    /// Decodes a record; one without `id` (written by an earlier version) gets ``legacyID(type:date:)``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = try container.decode(GrantType.self, forKey: .type)
        date = try container.decode(Date.self, forKey: .date)
        redirectURI = try container.decodeIfPresent(String.self, forKey: .redirectURI)
        id = try container.decodeIfPresent(String.self, forKey: .id) ?? Self.legacyID(type: type, date: date)
    }
}

/// The authorization error that stopped a session (an OAuth `error` from the token endpoint).
public struct AuthorizationErrorRecord: Sendable, Hashable, Codable {
    /// The OAuth `error` code (`invalid_grant`).
    public var code: String
    /// The server's `error_description`, if any.
    public var description: String?
    /// When it happened.
    public var date: Date

    /// Creates a record.
    public init(code: String, description: String? = nil, date: Date = Date()) {
        self.code = code
        self.description = description
        self.date = date
    }
}

// MARK: - Serialized form

extension AuthState {
    private enum CodingKeys: String, CodingKey {
        case version, configuration, client, scopes, grant
        case accessToken, accessTokenExpiresAt, accessTokenIssuedAt, refreshToken, idToken, grantedScopes, tokenType
        case isAccessTokenStale, authorizationError
    }

    /// Decodes a state, refusing versions this library does not know.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let version = try container.decode(Int.self, forKey: .version)
        guard (1...Self.currentVersion).contains(version) else {
            throw DecodingError.dataCorruptedError(
                forKey: .version,
                in: container,
                debugDescription:
                    "version \(version) is not one this library reads (1...\(Self.currentVersion)); it was written by a newer version"
            )
        }
        configuration = try container.decode(ServiceConfiguration.self, forKey: .configuration)
        client = try container.decode(OAuthClient.self, forKey: .client)
        scopes = try container.decode([String].self, forKey: .scopes)
        grant = try container.decode(GrantRecord.self, forKey: .grant)
        accessToken = try container.decodeIfPresent(String.self, forKey: .accessToken)
        accessTokenExpiresAt = try container.decodeIfPresent(Date.self, forKey: .accessTokenExpiresAt)
        accessTokenIssuedAt = try container.decodeIfPresent(Date.self, forKey: .accessTokenIssuedAt)
        refreshToken = try container.decodeIfPresent(String.self, forKey: .refreshToken)
        idToken = try container.decodeIfPresent(String.self, forKey: .idToken)
        grantedScopes = try container.decodeIfPresent([String].self, forKey: .grantedScopes)
        tokenType = try container.decodeIfPresent(String.self, forKey: .tokenType)
        isAccessTokenStale = try container.decodeIfPresent(Bool.self, forKey: .isAccessTokenStale) ?? false
        authorizationError = try container.decodeIfPresent(AuthorizationErrorRecord.self, forKey: .authorizationError)
    }

    /// Encodes the state with its version.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.currentVersion, forKey: .version)
        try container.encode(configuration, forKey: .configuration)
        try container.encode(client, forKey: .client)
        try container.encode(scopes, forKey: .scopes)
        try container.encode(grant, forKey: .grant)
        try container.encodeIfPresent(accessToken, forKey: .accessToken)
        try container.encodeIfPresent(accessTokenExpiresAt, forKey: .accessTokenExpiresAt)
        try container.encodeIfPresent(accessTokenIssuedAt, forKey: .accessTokenIssuedAt)
        try container.encodeIfPresent(refreshToken, forKey: .refreshToken)
        try container.encodeIfPresent(idToken, forKey: .idToken)
        try container.encodeIfPresent(grantedScopes, forKey: .grantedScopes)
        try container.encodeIfPresent(tokenType, forKey: .tokenType)
        if isAccessTokenStale { try container.encode(true, forKey: .isAccessTokenStale) }
        try container.encodeIfPresent(authorizationError, forKey: .authorizationError)
    }

    /// The JSON the stores write: sorted keys, ISO 8601 dates.
    public func encoded() throws(OAuthError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        do {
            return try encoder.encode(self)
        } catch {
            throw OAuthError(.storage, "could not encode the session: \(error)")
        }
    }

    /// Reads the JSON ``encoded()`` writes.
    ///
    /// - Throws: ``OAuthError/Kind/storage`` naming what is wrong (not JSON, a missing field, an
    ///   unknown version). The message never quotes the data.
    public init(decoding data: Data) throws(OAuthError) {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            self = try decoder.decode(AuthState.self, from: data)
        } catch let error as DecodingError {
            throw OAuthError(.storage, "the stored session is not valid: \(Self.describe(error))")
        } catch {
            throw OAuthError(.storage, "the stored session is not valid: \(error.localizedDescription)")
        }
    }

    /// A decoding error's path and reason, without the values (which may be tokens).
    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map(\.stringValue).joined(separator: ".")
            return keys.isEmpty ? "" : " at \(keys)"
        }
        switch error {
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty
                ? "not JSON, or not a session document" : "\(context.debugDescription)\(path(context))"
        case .keyNotFound(let key, let context):
            return "missing \(key.stringValue)\(path(context))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "unexpected value\(path(context))"
        @unknown default:
            return "unreadable"
        }
    }
}

extension Duration {
    /// The duration in seconds, as a `TimeInterval`.
    var seconds: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
