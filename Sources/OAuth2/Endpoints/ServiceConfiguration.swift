public import Foundation

/// Where an authorization server's endpoints are.
///
/// Build one by hand, take the ``google`` preset, or ask the issuer with
/// ``discover(issuer:using:transport:)``.
public struct ServiceConfiguration: Sendable, Hashable, Codable {
    /// The issuer identifier (from discovery), when known.
    public var issuer: URL?
    /// Where the browser goes to sign in (authorization code flow).
    public var authorizationEndpoint: URL?
    /// Where codes, device codes and refresh tokens become access tokens.
    public var tokenEndpoint: URL
    /// Where the device flow starts (RFC 8628).
    public var deviceAuthorizationEndpoint: URL?
    /// Where tokens are revoked (RFC 7009).
    public var revocationEndpoint: URL?
    /// The OpenID Connect userinfo endpoint.
    public var userinfoEndpoint: URL?

    /// Creates a configuration.
    public init(
        issuer: URL? = nil,
        authorizationEndpoint: URL? = nil,
        tokenEndpoint: URL,
        deviceAuthorizationEndpoint: URL? = nil,
        revocationEndpoint: URL? = nil,
        userinfoEndpoint: URL? = nil
    ) {
        self.issuer = issuer
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.deviceAuthorizationEndpoint = deviceAuthorizationEndpoint
        self.revocationEndpoint = revocationEndpoint
        self.userinfoEndpoint = userinfoEndpoint
    }

    /// Google's OAuth 2.0 endpoints.
    public static let google = ServiceConfiguration(
        issuer: URL(string: "https://accounts.google.com")!,
        authorizationEndpoint: URL(string: "https://accounts.google.com/o/oauth2/v2/auth")!,
        tokenEndpoint: URL(string: "https://oauth2.googleapis.com/token")!,
        deviceAuthorizationEndpoint: URL(string: "https://oauth2.googleapis.com/device/code")!,
        revocationEndpoint: URL(string: "https://oauth2.googleapis.com/revoke")!,
        userinfoEndpoint: URL(string: "https://openidconnect.googleapis.com/v1/userinfo")!
    )

    /// The scope of gRPC's auth test service (`grpc-test.sandbox.googleapis.com`).
    public static let googleTestScope = "https://www.googleapis.com/auth/xapi.zoo"
}
