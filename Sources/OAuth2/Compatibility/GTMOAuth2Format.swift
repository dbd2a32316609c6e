import AuthRPCSyntax

/// What a GTMOAuth2 keychain string holds: the session and the identity GTMOAuth2 kept beside it.
public struct GTMOAuth2Item: Sendable, CustomStringConvertible {
    /// The session: the tokens and scopes, marked stale (the string has no expiry).
    public var state: AuthState
    /// GTMOAuth2's `serviceProvider` (`Google`).
    public var serviceProvider: String?
    /// The user's identifier (`userID`).
    public var userID: String?
    /// The user's email (`email`, or `userEmail` in later writers).
    public var userEmail: String?
    /// Whether the email was verified (`isVerified`, or `userEmailIsVerified`); `nil` when absent
    /// or not a recognized value.
    public var userEmailIsVerified: Bool?

    /// Creates an item.
    public init(
        state: AuthState,
        serviceProvider: String? = nil,
        userID: String? = nil,
        userEmail: String? = nil,
        userEmailIsVerified: Bool? = nil
    ) {
        self.state = state
        self.serviceProvider = serviceProvider
        self.userID = userID
        self.userEmail = userEmail
        self.userEmailIsVerified = userEmailIsVerified
    }

    /// The identity and the state's redacted description; never a token.
    public var description: String {
        "GTMOAuth2Item(serviceProvider: \(serviceProvider ?? "none"), userID: \(userID ?? "none"), userEmail: \(userEmail ?? "none"), state: \(state))"
    }
}

/// GTMOAuth2's keychain string: `access_token=…&email=…&isVerified=…&refresh_token=…&scope=…&serviceProvider=…&userID=…`.
///
/// GTMOAuth2 wrote the keys sorted, each key and value percent-encoded with every character
/// outside `[A-Za-z0-9-._~]` escaped. ``decode(_:client:configuration:fallbackScopes:)`` reads that
/// and the variants other writers produced; ``encode(_:)`` writes it strictly.
public enum GTMOAuth2Format {
    /// Reads a GTMOAuth2 keychain string.
    ///
    /// Pairs are split on `&`, each on its first `=` only, and percent-decoded; `+` is a literal
    /// plus (GTMOAuth2 escaped `+`, so a raw one never meant a space). When a key appears more
    /// than once the last value wins; `userEmail` and `userEmailIsVerified` are read as `email` and
    /// `isVerified`. `isVerified` is true for `1`, `true`, `yes` and false for `0`, `false`, `no`.
    /// Unknown keys are ignored.
    ///
    /// The string has no expiry, so the state is marked stale and its first use refreshes.
    ///
    /// - Parameters:
    ///   - string: The keychain string.
    ///   - client: The client the tokens were issued to (the old app's id and secret).
    ///   - configuration: The endpoints the tokens are refreshed at; Google's by default.
    ///   - fallbackScopes: The scopes to assume when the string has no `scope`.
    /// - Throws: ``OAuthError/Kind/storage`` when the string has no `refresh_token`.
    public static func decode(
        _ string: String,
        client: OAuthClient,
        configuration: ServiceConfiguration = .google,
        fallbackScopes: [String] = []
    ) throws(OAuthError) -> GTMOAuth2Item {
        var values: [String: String] = [:]
        for pair in string.split(separator: "&", omittingEmptySubsequences: true) {
            let key: String
            let value: String
            if let equals = pair.firstIndex(of: "=") {
                key = PercentEncoding.decode(pair[..<equals], plusIsSpace: false)
                value = PercentEncoding.decode(pair[pair.index(after: equals)...], plusIsSpace: false)
            } else {
                key = PercentEncoding.decode(pair, plusIsSpace: false)
                value = ""
            }
            values[aliases[key] ?? key] = value
        }
        func nonEmpty(_ key: String) -> String? { values[key].flatMap { $0.isEmpty ? nil : $0 } }

        guard let refreshToken = nonEmpty(Key.refreshToken) else {
            throw OAuthError(.storage, "the GTMOAuth2 item has no refresh_token, so its session cannot be renewed")
        }
        let grantedScopes = nonEmpty(Key.scope).map { $0.split(separator: " ").map(String.init) }
        let state = AuthState(
            configuration: configuration,
            client: client,
            scopes: grantedScopes ?? fallbackScopes,
            grant: GrantRecord(type: .gtmOAuth2Migration),
            accessToken: nonEmpty(Key.accessToken),
            refreshToken: refreshToken,
            grantedScopes: grantedScopes,
            isAccessTokenStale: true
        )
        return GTMOAuth2Item(
            state: state,
            serviceProvider: nonEmpty(Key.serviceProvider),
            userID: nonEmpty(Key.userID),
            userEmail: nonEmpty(Key.email),
            userEmailIsVerified: nonEmpty(Key.isVerified).flatMap(parseBool)
        )
    }

    /// Writes `item` as GTMOAuth2 did: keys sorted, GTMOAuth2's names (`email`, `isVerified` as
    /// `1`/`0`), every character outside `[A-Za-z0-9-._~]` percent-encoded, absent values left out.
    /// The scope is the state's effective scopes, space-separated.
    public static func encode(_ item: GTMOAuth2Item) -> String {
        let scope = item.state.effectiveScopes.joined(separator: " ")
        let values: [String: String?] = [
            Key.accessToken: item.state.accessToken,
            Key.refreshToken: item.state.refreshToken,
            Key.scope: scope.isEmpty ? nil : scope,
            Key.serviceProvider: item.serviceProvider,
            Key.userID: item.userID,
            Key.email: item.userEmail,
            Key.isVerified: item.userEmailIsVerified.map { $0 ? "1" : "0" },
        ]
        return
            values
            .compactMap { key, value in value.map { (key, $0) } }
            .sorted { $0.0 < $1.0 }
            .map { "\(PercentEncoding.encodeUnreserved($0.0))=\(PercentEncoding.encodeUnreserved($0.1))" }
            .joined(separator: "&")
    }

    private enum Key {
        static let accessToken = "access_token"
        static let refreshToken = "refresh_token"
        static let scope = "scope"
        static let serviceProvider = "serviceProvider"
        static let userID = "userID"
        static let email = "email"
        static let isVerified = "isVerified"
    }

    /// Later writers' names for GTMOAuth2's keys.
    private static let aliases = ["userEmail": Key.email, "userEmailIsVerified": Key.isVerified]

    private static func parseBool(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "1", "true", "yes": return true
        case "0", "false", "no": return false
        default: return nil
        }
    }
}
