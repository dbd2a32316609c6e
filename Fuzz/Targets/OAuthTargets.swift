import Foundation
import AuthRPCTransport

@testable import OAuth2

/// A fixed moment with whole seconds, so that what the session file keeps (ISO 8601 seconds) is
/// exactly what was computed from it.
private let receivedAt = Date(timeIntervalSince1970: 1_800_000_000)

/// The string members of a JSON object, as a peer sent them: what must never be quoted back.
private func jsonStrings(_ bytes: [UInt8], _ keys: [String]) -> [String] {
    guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else { return [] }
    return keys.compactMap { object[$0] as? String }
}

/// Throws when `text` quotes one of `secrets` (those long enough that a match is no accident).
func requireNoSecret(_ text: String, _ secrets: [String], _ what: String) throws(OracleViolation) {
    for secret in secrets where secret.utf8.count >= 24 {
        try require(!text.contains(secret), "\(what) quotes a secret the peer sent")
    }
}

/// Throws when `state`'s description depends on a secret it holds. Comparing with the same state
/// holding placeholders, rather than searching the text for each secret, lets the description
/// show what it may (scopes, the client id) even when a peer filled those with a token's text.
func requireDescriptionHidesSecrets(_ state: AuthState, _ what: String) throws(OracleViolation) {
    try require(state.description == withPlaceholderSecrets(state).description, "\(what) shows a secret")
}

/// `state` with each secret it holds replaced by a placeholder.
func withPlaceholderSecrets(_ state: AuthState) -> AuthState {
    var other = state
    other.accessToken = state.accessToken.map { _ in "placeholder-access-token" }
    other.refreshToken = state.refreshToken.map { _ in "placeholder-refresh-token" }
    other.idToken = state.idToken.map { _ in "placeholder.id.token" }
    other.client.secret = state.client.secret.map { _ in "placeholder-client-secret" }
    return other
}

/// The same session, written and read back: what the session file must keep.
private func requireSameSession(_ a: AuthState, _ b: AuthState) throws(OracleViolation) {
    try require(
        a.accessToken == b.accessToken && a.refreshToken == b.refreshToken && a.idToken == b.idToken
            && a.grantedScopes == b.grantedScopes && a.tokenType == b.tokenType && a.scopes == b.scopes
            && a.isAccessTokenStale == b.isAccessTokenStale && a.grant == b.grant
            && a.accessTokenExpiresAt == b.accessTokenExpiresAt && a.accessTokenIssuedAt == b.accessTokenIssuedAt
            && a.authorizationError == b.authorizationError && a.configuration == b.configuration
            && a.client == b.client,
        "the session file did not keep the session"
    )
}

/// `TokenResponse(json:)` and `OAuthErrorResponse(json:)`: a token endpoint's answer, and
/// `GrantRequest.token(in:receivedAt:from:)`, the same answer from a Google token endpoint or a
/// metadata server. What is accepted obeys the documented bounds, a session that takes it in is
/// fresh and survives its file, and no error quotes a token.
enum TokenResponseTarget {
    static func run(_ bytes: [UInt8]) throws(OracleViolation) {
        let data = Data(bytes)
        let secrets = jsonStrings(bytes, ["access_token", "refresh_token", "id_token"])
        switch Result(catching: { () throws(OAuthError) in
            try GrantRequest.token(in: data, receivedAt: receivedAt, from: "the fuzzer")
        }) {
        case .success(let fetched):
            try require(
                fetched.lifetime.map { $0 >= .seconds(1) && $0 <= .seconds(TokenResponse.maximumLifetime) } ?? true,
                "a fetched token's lifetime is outside the accepted bounds"
            )
            _ = fetched.expiresAt
            // It shows the granted scopes, which a peer may fill with any text, the token's too.
            var placeholder = fetched
            placeholder.accessToken = "placeholder-access-token"
            try require(
                placeholder.description == fetched.description,
                "a fetched token's description shows the access token"
            )
        case .failure(let error):
            try requireNoSecret(error.message, secrets, "a refused grant answer's message")
        }
        if let error = OAuthErrorResponse(json: data) {
            try require(TokenSyntax.isErrorCode(error.code), "an error code that is not 1*NQSCHAR was taken")
            try require(
                (error.description?.count ?? 0) <= TokenSyntax.maximumQuotedDescriptionLength + 1,
                "an error_description was not cut"
            )
            _ = error.summary
        }
        let response: TokenResponse
        do throws(InvalidTokenResponse) {
            response = try TokenResponse(json: data)
        } catch {
            try requireNoSecret(error.reason + error.description, secrets, "a refused token answer's reason")
            if let rotated = error.rotatedRefreshToken {
                try require(
                    TokenSyntax.isRefreshToken(rotated),
                    "a malformed refresh token was kept from a refused answer"
                )
            }
            return
        }
        try require(
            TokenSyntax.isBearerToken(response.accessToken),
            "an access token a Bearer header cannot carry was taken"
        )
        try require(
            response.tokenType.map { $0.lowercased() == "bearer" } ?? true,
            "a token type other than Bearer was taken"
        )
        if let lifetime = response.expiresIn {
            try require(
                lifetime >= TokenResponse.minimumLifetime && lifetime <= TokenResponse.maximumLifetime,
                "expires_in \(lifetime) is outside the accepted bounds"
            )
        }
        try require(
            response.refreshToken.map(TokenSyntax.isRefreshToken) ?? true,
            "a malformed refresh token was taken"
        )
        try require(response.idToken.map(TokenSyntax.isCompactJWT) ?? true, "a malformed ID token was taken")

        var state = AuthState(
            configuration: .google,
            client: OAuthClient(id: "fuzz-client"),
            scopes: ["openid"],
            grant: GrantRecord(type: .deviceCode, date: receivedAt, id: "fuzz-grant")
        )
        state.apply(response, receivedAt: receivedAt)
        try require(state.isAccessTokenFresh(at: receivedAt), "a token just received is not fresh")
        try requireDescriptionHidesSecrets(state, "the session's description")
        let stored: AuthState
        do throws(OAuthError) {
            stored = try AuthState(decoding: try state.encoded())
        } catch {
            throw OracleViolation("a session holding an accepted token answer cannot be read back: \(error.message)")
        }
        // The file keeps whole seconds: the expiry may come back up to a second earlier.
        var truncated = state
        truncated.accessTokenExpiresAt = state.accessTokenExpiresAt.map {
            Date(timeIntervalSince1970: $0.timeIntervalSince1970.rounded(.down))
        }
        try requireSameSession(truncated, stored)
        try require(stored.isAccessTokenFresh(at: receivedAt), "a token just received is not fresh once stored")
        _ = (stored.userID, stored.userEmail, stored.userEmailIsVerified)
    }
}

/// `DeviceAuthorizationFlow.Authorization(parsing:receivedAt:)`: the device authorization answer.
/// The interval and lifetime stay within their bounds, the page is https (or loopback http), and
/// the device code is never shown.
enum DeviceAuthorizationTarget {
    static func run(_ bytes: [UInt8]) throws(OracleViolation) {
        let secrets = jsonStrings(bytes, ["device_code"])
        let authorization: DeviceAuthorizationFlow.Authorization
        do throws(OAuthError) {
            authorization = try DeviceAuthorizationFlow.Authorization(parsing: Data(bytes), receivedAt: receivedAt)
        } catch {
            try requireNoSecret(error.message, secrets, "a refused device answer's message")
            return
        }
        let bounds = DeviceAuthorizationFlow.Authorization.intervalBounds
        try require(
            authorization.interval >= .seconds(bounds.lowerBound)
                && authorization.interval <= .seconds(bounds.upperBound),
            "the polling interval \(authorization.interval) is outside \(bounds)"
        )
        let lifetime = authorization.expiresAt.timeIntervalSince(receivedAt)
        try require(
            DeviceAuthorizationFlow.Authorization.lifetimeBounds.contains(lifetime),
            "the codes' lifetime \(lifetime) is outside its bounds"
        )
        try require(EndpointSecurity.allows(authorization.verificationURI), "an insecure verification page was taken")
        try require(
            authorization.verificationURIComplete.map(EndpointSecurity.allows) ?? true,
            "an insecure complete verification page was taken"
        )
        try require(
            !authorization.userCode.isEmpty && authorization.userCode.utf8.count <= 128,
            "a user code outside 1...128 bytes was taken"
        )
        // The description shows the user code and the page, which a peer may fill with the device
        // code's text; it must not show the device code otherwise.
        let shown = authorization.userCode + authorization.verificationURI.absoluteString
        try requireNoSecret(
            authorization.description,
            [authorization.deviceCode].filter { !shown.contains($0) },
            "the authorization's description"
        )
    }
}

/// `ServiceConfiguration(discoveryDocument:issuer:)`: a discovery document for an issuer. Every
/// endpoint taken may carry secrets (https, or http on loopback).
///
/// Input: the issuer URL on the first line, then the document.
enum DiscoveryDocumentTarget {
    static func run(_ bytes: [UInt8]) throws(OracleViolation) {
        var input = FuzzInput(bytes)
        let issuerText = String(decoding: input.line(), as: UTF8.self)
        guard let issuer = URL(string: issuerText) else { return }
        for document in [ServiceConfiguration.DiscoveryDocument.openIDConnect, .oauthAuthorizationServer] {
            _ = ServiceConfiguration.discoveryURL(issuer: issuer, document: document)
        }
        let configuration: ServiceConfiguration
        do throws(OAuthError) {
            configuration = try ServiceConfiguration(discoveryDocument: Data(input.rest()), issuer: issuer)
        } catch {
            // Text from the document is quoted bounded; the issuer is the caller's own and quoted whole.
            let fromDocument = error.message.replacingOccurrences(of: issuer.absoluteString, with: "")
            try require(fromDocument.count < 2000, "a discovery error message of \(error.message.count) characters")
            return
        }
        let endpoints =
            [configuration.tokenEndpoint]
            + [
                configuration.authorizationEndpoint, configuration.deviceAuthorizationEndpoint,
                configuration.revocationEndpoint, configuration.userinfoEndpoint,
            ].compactMap { $0 }
        for endpoint in endpoints {
            try require(EndpointSecurity.allows(endpoint), "an endpoint that may not carry secrets was taken")
        }
    }
}

/// `IDTokenClaims(jwt:)`: the ID token's claims, read for display. Fed the input as a whole token,
/// and as the payload of one (so the JSON reader is reached at once).
enum IDTokenTarget {
    static func run(_ bytes: [UInt8]) throws(OracleViolation) {
        _ = IDTokenClaims(jwt: String(decoding: bytes, as: UTF8.self))
        let payload = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(
                of: "=",
                with: ""
            )
        let claims = IDTokenClaims(jwt: "eyJhbGciOiJSUzI1NiJ9.\(payload).c2ln")
        if claims == nil, let object = try? JSONSerialization.jsonObject(with: Data(bytes)), object is [String: Any] {
            throw OracleViolation("the claims of a JSON object payload were not read")
        }
        let state = AuthState(
            configuration: .google,
            client: OAuthClient(id: "fuzz-client"),
            scopes: [],
            grant: GrantRecord(type: .deviceCode, date: receivedAt, id: "fuzz-grant"),
            idToken: "eyJhbGciOiJSUzI1NiJ9.\(payload).c2ln"
        )
        _ = (state.userID, state.userEmail, state.userEmailIsVerified)
    }
}

/// `GTMOAuth2Format.decode`: a GTMOAuth2 keychain string. What it reads, written back with
/// `encode`, reads the same; the description never shows a token.
enum GTMOAuth2Target {
    static func run(_ bytes: [UInt8]) throws(OracleViolation) {
        let client = OAuthClient(id: "fuzz-client", secret: "fuzz-secret-0123456789-abcdefghij")
        let item: GTMOAuth2Item
        do throws(OAuthError) {
            item = try GTMOAuth2Format.decode(String(decoding: bytes, as: UTF8.self), client: client)
        } catch {
            return
        }
        // The item shows the identity and the scopes, which the string may fill with any text.
        var placeholders = item
        placeholders.state = withPlaceholderSecrets(item.state)
        try require(placeholders.description == item.description, "the GTMOAuth2 item's description shows a secret")
        let again: GTMOAuth2Item
        do throws(OAuthError) {
            again = try GTMOAuth2Format.decode(GTMOAuth2Format.encode(item), client: client)
        } catch {
            throw OracleViolation("a GTMOAuth2 string written from a decoded item does not decode: \(error.message)")
        }
        try require(
            again.state.accessToken == item.state.accessToken && again.state.refreshToken == item.state.refreshToken
                && again.state.effectiveScopes == item.state.effectiveScopes
                && again.serviceProvider == item.serviceProvider
                && again.userID == item.userID && again.userEmail == item.userEmail
                && again.userEmailIsVerified == item.userEmailIsVerified,
            "a GTMOAuth2 item did not survive encode and decode"
        )
    }
}

/// The session file, read by `FileAuthSessionStore.retrieve()` (`AuthState(decoding:)`). A
/// session read is written back identically, and its description never shows a token.
enum SessionFileTarget {
    /// One file per process, rewritten for each input.
    private static let file = scratchDirectory("session-file").appendingPathComponent("session.json")

    static func run(_ bytes: [UInt8]) throws(OracleViolation) {
        try writeScratchFile(bytes, to: file)
        let state: AuthState?
        do throws(OAuthError) {
            state = try FileAuthSessionStore(fileURL: file).retrieve()
        } catch {
            try requireNoSecret(
                error.message,
                jsonStrings(bytes, ["accessToken", "refreshToken", "idToken"]),
                "a refused session file's message"
            )
            return
        }
        guard let state else { throw OracleViolation("the session file just written was not found") }
        try requireDescriptionHidesSecrets(state, "the session's description")
        _ = state.isAccessTokenFresh(at: receivedAt)
        _ = state.freshUntil(tolerance: .seconds(60))
        _ = (state.userID, state.userEmail, state.userEmailIsVerified, state.isAuthorized)
        let encoded: Data
        let stored: AuthState
        do throws(OAuthError) {
            encoded = try state.encoded()
            stored = try AuthState(decoding: encoded)
        } catch {
            throw OracleViolation("a session that was read cannot be written and read back: \(error.message)")
        }
        try requireSameSession(state, stored)
        try require((try? stored.encoded()) == encoded, "a session read back does not write the same file")
    }
}

/// `LoopbackRequestHead.parse` and `queryParameters`: what a local process sends to the redirect
/// port. What a prefix amounts to (unless incomplete) stays the same as bytes arrive; a target
/// taken is origin-form visible ASCII; a problem's status is 400, 431 or 505.
enum LoopbackRequestTarget {
    static func run(_ bytes: [UInt8]) throws(OracleViolation) {
        let parse = LoopbackRequestHead.parse(bytes)
        let prefix = LoopbackRequestHead.parse(bytes.prefix(bytes.count / 2))
        try require(
            prefix == .incomplete || prefix == parse,
            "what a prefix of the head amounted to changed as more bytes arrived"
        )
        switch parse {
        case .complete(let head):
            try require(
                head.target.first == "/" && head.target.utf8.allSatisfy { (0x21...0x7E).contains($0) && $0 != 0x23 },
                "request target \(head.target.debugDescription) is not origin-form visible ASCII"
            )
            try require(!head.method.isEmpty, "an empty method was taken")
            try require(head.version == .http1_0 || head.host != nil, "an HTTP/1.1 head without Host was taken")
            if let parameters = head.queryParameters {
                try require(
                    parameters.count <= head.target.utf8.count,
                    "more parameters than the target has bytes"
                )
            }
        case .invalid(let problem):
            try require([400, 431, 505].contains(problem.status), "problem \(problem) answers \(problem.status)")
        case .incomplete:
            break
        }
        _ =
            LoopbackRequestHead(
                method: "GET",
                target: "/?" + String(decoding: bytes, as: UTF8.self),
                version: .http1_1,
                host: nil
            ).queryParameters
    }
}

/// The small syntax checks every OAuth answer goes through: `JSONNumber`, `TokenSyntax`,
/// `FormEncoding` (decode, and encode-decode round trips), percent-decoding, `EndpointSecurity`.
enum OAuthSyntaxTarget {
    static func run(_ bytes: [UInt8]) throws(OracleViolation) {
        let text = String(decoding: bytes, as: UTF8.self)
        if let number = JSONNumber.value(of: text) {
            try require(
                !number.isNaN && number == Double(text),
                "\(text.debugDescription) read as the number \(number)"
            )
        }
        if TokenSyntax.isBearerToken(text) {
            try require(
                text.utf8.count <= TokenSyntax.maximumAccessTokenLength && !text.contains(" "),
                "a bearer token outside its syntax was taken"
            )
        }
        if let scopes = TokenSyntax.scopeTokens(text) {
            try require(
                scopes.joined(separator: " ") == text.split(separator: " ").joined(separator: " "),
                "scope tokens do not rebuild the scope"
            )
        }
        _ = TokenSyntax.isRefreshToken(text) || TokenSyntax.isCompactJWT(text) || TokenSyntax.isErrorCode(text)
        for limit in [0, 1, 32, 200] {
            try require(
                TokenSyntax.bounded(text, to: limit).count <= limit + 1,
                "bounded text is longer than its limit"
            )
        }
        let pairs = FormEncoding.decode(text)
        let again = FormEncoding.decode(FormEncoding.encode(pairs))
        try require(
            again.map(\.0) == pairs.map(\.0) && again.map(\.1) == pairs.map(\.1),
            "form pairs did not survive encode and decode"
        )
        for plusIsSpace in [false, true] {
            try require(
                FormEncoding.percentDecode(FormEncoding.percentEncode(text), plusIsSpace: plusIsSpace) == text,
                "percent-encoding did not read back"
            )
        }
        _ = EndpointSecurity.isLoopback(text)
        if let url = URL(string: text), EndpointSecurity.allows(url) {
            let scheme = url.scheme?.lowercased()
            try require(
                scheme == "https" || (scheme == "http" && url.host.map(EndpointSecurity.isLoopback) == true),
                "\(text.debugDescription) may carry secrets but is neither https nor loopback http"
            )
        }
    }
}
