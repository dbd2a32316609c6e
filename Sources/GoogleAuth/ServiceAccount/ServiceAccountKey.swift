import AuthCrypto
import AuthRPCSystem
public import Foundation
public import OAuth2

/// A Google service account's key, from the JSON file Google gives out
/// (`"type": "service_account"`).
///
/// Every field is checked when the key is read: `client_email` and `token_uri` must be present
/// and well-formed, `private_key_id` well-formed when present (google-auth accepts keys without
/// one; their JWTs then carry no `kid`), and `private_key` must be an unencrypted RSA key of at
/// least 2048 bits (PKCS#8 as Google writes it, or PKCS#1).
///
/// Where the private key is: the file is read into memory that is cleared when released, the
/// key's PEM text is taken out of it before the JSON is parsed (so it never becomes a Swift
/// string) and handed to OpenSSL from memory that is cleared right after; from then on the key
/// lives only inside OpenSSL, which clears it when the last copy of this value goes. When the key
/// comes from ``init(json:source:)``, the caller's `Data` is the caller's to clear. The key never
/// appears in a `description` or an error.
public struct ServiceAccountKey: Sendable, CustomStringConvertible {
    /// The service account's email (`client_email`): the JWTs' `iss` and `sub`.
    public let clientEmail: String
    /// The key's id (`private_key_id`): the JWTs' `kid`; `nil` when the file has none (the JWTs
    /// then have no `kid`, as google-auth makes them).
    public let privateKeyID: String?
    /// Where the JWT bearer grant goes (`token_uri`): HTTPS, or HTTP to a loopback address only.
    public let tokenURI: URL
    /// The account's numeric id (`client_id`), when present.
    public let clientID: String?
    /// The project the account belongs to (`project_id`), when present.
    public let projectID: String?
    /// The universe (`universe_domain`), `googleapis.com` when absent.
    public let universeDomain: String
    /// Where the key was read from (a path), for ``identity``.
    public let source: String?

    /// The private key, inside OpenSSL.
    let signingKey: RSAPrivateKey

    /// Reads a key from the JSON of a key file.
    ///
    /// - Parameters:
    ///   - data: The key file's JSON, as Google gives it out (at most 64 KiB).
    ///   - source: Where the JSON came from, for messages and ``identity`` (a path).
    /// - Throws: ``/OAuth2/OAuthError/Kind/invalidConfiguration`` naming the file and the field that is
    ///   missing or wrong. The private key is never quoted.
    public init(json data: Data, source: String? = nil) throws(OAuthError) {
        try self.init(CredentialFile(json: data, source: source ?? "the service account key"), source: source)
    }

    /// Reads the key file at `path`.
    ///
    /// - Throws: ``/OAuth2/OAuthError/Kind/invalidConfiguration`` when the file cannot be read or is not
    ///   a usable service-account key.
    public init(contentsOfFile path: String) throws(OAuthError) {
        try self.init(CredentialFile(contentsOfFile: path), source: path)
    }

    init(_ file: CredentialFile, source: String?) throws(OAuthError) {
        let type = try file.type()
        guard type == "service_account" else {
            throw OAuthError(
                .invalidConfiguration,
                "\(file.source) has type \(CredentialFile.shown(type: type)), not service_account"
            )
        }
        let email = try file.token("client_email")!
        guard email.contains("@") else {
            throw OAuthError(.invalidConfiguration, "client_email in \(file.source) is not an email address")
        }
        clientEmail = email
        privateKeyID = try file.token("private_key_id", maximumLength: 128, required: false)
        clientID = try file.token("client_id", maximumLength: 128, required: false)
        projectID = try file.token("project_id", maximumLength: 128, required: false)
        universeDomain =
            try file.token("universe_domain", maximumLength: UniverseDomain.maximumLength, required: false).map {
                (domain) throws(OAuthError) in
                try UniverseDomain.validated(domain, from: "universe_domain in \(file.source)")
            } ?? GoogleCredentialIdentity.defaultUniverseDomain
        tokenURI = try Self.tokenURI(file)
        guard let pem = file.privateKeyPEM, pem.count > 0 else {
            // Absent, not a string, or a string no PEM key is written as: say which.
            _ = try file.requiredString("private_key")
            throw OAuthError(.invalidConfiguration, "private_key in \(file.source) is not PEM text")
        }
        do {
            signingKey = try pem.withUnsafeBytes { bytes throws(CryptoError) in try RSAPrivateKey(pemBytes: bytes) }
        } catch {
            throw OAuthError(.invalidConfiguration, "private_key in \(file.source) is not usable: \(error)")
        }
        self.source = source
    }

    /// `token_uri`: an absolute HTTPS URL, or HTTP to a loopback address (a local test server),
    /// so an assertion never crosses a network in the clear.
    private static func tokenURI(_ file: CredentialFile) throws(OAuthError) -> URL {
        let text = try file.token("token_uri", maximumLength: 2048)!
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty,
            url.user == nil, url.password == nil
        else {
            throw OAuthError(.invalidConfiguration, "token_uri in \(file.source) is not an absolute URL")
        }
        guard scheme == "https" || (scheme == "http" && LoopbackHost.contains(host)) else {
            throw OAuthError(
                .invalidConfiguration,
                "token_uri in \(file.source) must be https (http only to a loopback address), not \(scheme)://\(host)"
            )
        }
        return url
    }

    /// Who the key acts as, and the file it came from.
    public var identity: GoogleCredentialIdentity {
        GoogleCredentialIdentity(
            kind: .serviceAccount,
            principal: clientEmail,
            source: source,
            projectID: projectID,
            universeDomain: universeDomain
        )
    }

    /// The account, key id and token endpoint; never the key.
    public var description: String {
        "ServiceAccountKey(\(clientEmail), key \(privateKeyID ?? "without an id"), token_uri \(GrantRequest.redacted(tokenURI)))"
    }

    /// A JWT with `claims`, signed RS256 with this key, `kid` = ``privateKeyID`` (none without one).
    func signedJWT(_ claims: JWTClaims) throws(OAuthError) -> String {
        do {
            return try JSONWebToken.rs256(claims: claims, keyID: privateKeyID, key: signingKey)
        } catch {
            throw OAuthError(.invalidConfiguration, "cannot sign a JWT with the key of \(clientEmail): \(error)")
        }
    }
}

/// Loopback names and addresses, where plain HTTP cannot be overheard.
enum LoopbackHost {
    static func contains(_ host: String) -> Bool {
        let host = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if host == "localhost" || host == "::1" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets.first == "127" && octets.allSatisfy { UInt8($0) != nil }
    }
}
