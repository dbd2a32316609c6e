import AuthRPCSystem
import Foundation
import Logging
import OAuth2

/// The AWS source: a `GetCallerIdentity` request signed with the workload's AWS credentials
/// (``AWSSignedRequest``).
///
/// - **Region**: `AWS_REGION`, else `AWS_DEFAULT_REGION`, else the instance metadata service's
///   availability zone at `region_url` without its last letter (`us-east-1b` is `us-east-1`).
///   Found once, then kept.
/// - **Credentials**: `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` (with `AWS_SESSION_TOKEN`)
///   when both are set; else the instance's role credentials: its role's name at `url`, then
///   `url/ROLE` (`AccessKeyId`, `SecretAccessKey`, `Token`). Asked anew for every exchange.
/// - **IMDSv2**: when the file names `imdsv2_session_token_url` and the metadata service is
///   asked anything, a session token is asked for first (`PUT` with
///   `X-aws-ec2-metadata-token-ttl-seconds: 300`) and sent with each request as
///   `X-aws-ec2-metadata-token`.
///
/// The metadata addresses come only from the file. They are plain http (the service is never
/// off the host), which is allowed for exactly those URLs and requests that carry no secret of
/// this package's.
final class AWSSubjectToken: Sendable {
    static let sessionTokenTTLHeader = "X-aws-ec2-metadata-token-ttl-seconds"
    static let sessionTokenTTL = "300"
    static let sessionTokenHeader = "X-aws-ec2-metadata-token"
    /// How long the instance metadata service may take to answer.
    static let timeout: Duration = .seconds(10)
    /// The most an instance metadata answer may hold.
    static let maximumAnswer = 64 * 1024

    let configuration: ExternalAccountCredentialSource.AWS
    let audience: String
    let environment: [String: String]
    let transport: any OAuthTransport
    private let region = Locked<String?>(nil)

    init(
        configuration: ExternalAccountCredentialSource.AWS,
        audience: String,
        environment: [String: String],
        transport: any OAuthTransport
    ) {
        self.configuration = configuration
        self.audience = audience
        self.environment = environment
        self.transport = transport
    }

    /// The serialised signed request, and the values no message may show (the secret key and the
    /// session token).
    func token(now: Date = Date()) async throws(OAuthError) -> (token: String, secrets: [String]) {
        var session = SessionToken()
        let region = try await self.region(session: &session)
        let credentials = try await self.credentials(session: &session)
        let url = configuration.verificationURLTemplate.replacingOccurrences(of: "{region}", with: region)
        do throws(AWSSignedRequest.Failure) {
            let request = try AWSSignedRequest.getCallerIdentity(
                url: url,
                region: region,
                credentials: credentials,
                targetResource: audience,
                date: now
            )
            return (request.subjectToken, [credentials.secretAccessKey, credentials.sessionToken].compactMap { $0 })
        } catch {
            throw OAuthError(.invalidConfiguration, "signing the AWS request failed: \(error.reason)")
        }
    }

    // MARK: - Region

    private func region(session: inout SessionToken) async throws(OAuthError) -> String {
        if let known = region.withLock({ $0 }) { return known }
        let found: String
        if let value = variable("AWS_REGION") ?? variable("AWS_DEFAULT_REGION") {
            found = value
        } else {
            guard let url = configuration.regionURL else {
                throw OAuthError(
                    .invalidConfiguration,
                    "no AWS region: AWS_REGION and AWS_DEFAULT_REGION are not set and the credential_source names no region_url"
                )
            }
            let zone = try await metadata(url, purpose: "AWS region", session: &session)
            found = String(zone.trimmingCharacters(in: .whitespacesAndNewlines).dropLast())
        }
        guard (1...64).contains(found.count),
            found.utf8.allSatisfy({
                $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0) || (0x61...0x7A).contains($0)
            })
        else {
            throw OAuthError(
                .invalidConfiguration,
                "the AWS region \"\(QuotedText.quote(found.prefix(64)))\" is not a region name (lowercase letters, digits and -)"
            )
        }
        region.withLock { $0 = found }
        return found
    }

    // MARK: - Credentials

    private func credentials(session: inout SessionToken) async throws(OAuthError) -> AWSSignedRequest.Credentials {
        if let keyID = variable("AWS_ACCESS_KEY_ID"), let secret = variable("AWS_SECRET_ACCESS_KEY") {
            return try checked(
                AWSSignedRequest.Credentials(
                    accessKeyID: keyID,
                    secretAccessKey: secret,
                    sessionToken: variable("AWS_SESSION_TOKEN")
                ),
                from: "the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)"
            )
        }
        guard let url = configuration.credentialsURL else {
            throw OAuthError(
                .invalidConfiguration,
                "no AWS credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set and the credential_source names no url for the instance's role"
            )
        }
        let roleText = try await metadata(url, purpose: "AWS role", session: &session)
        let role = roleText.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...128).contains(role.count),
            role.utf8.allSatisfy({ byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || "+=,.@_-".utf8.contains(byte)
            })
        else {
            throw OAuthError(
                .invalidConfiguration,
                "\(GrantRequest.redacted(url)) answered with \"\(QuotedText.quote(role.prefix(64)))\", which is not an IAM role name"
            )
        }
        let roleURL = url.appendingPathComponent(role)
        let body = try await metadata(roleURL, purpose: "AWS credentials", session: &session)
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any],
            let keyID = object["AccessKeyId"] as? String, let secret = object["SecretAccessKey"] as? String
        else {
            throw OAuthError(
                .invalidConfiguration,
                "\(GrantRequest.redacted(roleURL)) did not answer with AccessKeyId and SecretAccessKey"
            )
        }
        return try checked(
            AWSSignedRequest.Credentials(
                accessKeyID: keyID,
                secretAccessKey: secret,
                sessionToken: (object["Token"] as? String).flatMap { $0.isEmpty ? nil : $0 }
            ),
            from: GrantRequest.redacted(roleURL)
        )
    }

    /// Credentials whose parts can go into a header: printable ASCII.
    private func checked(
        _ credentials: AWSSignedRequest.Credentials,
        from place: String
    ) throws(OAuthError) -> AWSSignedRequest.Credentials {
        let parts = [credentials.accessKeyID, credentials.secretAccessKey, credentials.sessionToken ?? "x"]
        guard
            parts.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 8192 && $0.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F } })
        else {
            throw OAuthError(.invalidConfiguration, "the AWS credentials from \(place) are not printable ASCII")
        }
        return credentials
    }

    // MARK: - Instance metadata

    /// An IMDSv2 session token, asked for once per exchange and only if the metadata service is.
    private struct SessionToken {
        var value: String?
        var asked = false
    }

    /// The text the instance metadata service answers at `url`, with the session token.
    private func metadata(_ url: URL, purpose: String, session: inout SessionToken) async throws(OAuthError) -> String {
        var headers: [(name: String, value: String)] = []
        if let token = try await sessionToken(&session) { headers.append((Self.sessionTokenHeader, token)) }
        let request = OAuthHTTPRequest(
            url: url,
            method: "GET",
            headers: headers,
            timeout: Self.timeout,
            maximumResponseBodySize: Self.maximumAnswer
        )
        let response = try await SourceRequest.send(
            request,
            transport: transport,
            purpose: purpose,
            metadataServers: MetadataServerHosts.aws
        )
        return try text(of: response, from: url, purpose: purpose, hiding: headers.map(\.value))
    }

    private func sessionToken(_ session: inout SessionToken) async throws(OAuthError) -> String? {
        guard let url = configuration.sessionTokenURL else { return nil }
        if session.asked { return session.value }
        let request = OAuthHTTPRequest(
            url: url,
            method: "PUT",
            headers: [(Self.sessionTokenTTLHeader, Self.sessionTokenTTL)],
            timeout: Self.timeout,
            maximumResponseBodySize: Self.maximumAnswer
        )
        let response = try await SourceRequest.send(
            request,
            transport: transport,
            purpose: "IMDSv2 session token",
            metadataServers: MetadataServerHosts.aws
        )
        let token = try text(of: response, from: url, purpose: "IMDSv2 session token", hiding: [])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty, token.utf8.count <= 4096, token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw OAuthError(
                .invalidConfiguration,
                "\(GrantRequest.redacted(url)) did not answer with an IMDSv2 session token (printable ASCII)"
            )
        }
        session = SessionToken(value: token, asked: true)
        return token
    }

    private func text(
        of response: OAuthHTTPResponse,
        from url: URL,
        purpose: String,
        hiding secrets: [String]
    ) throws(OAuthError) -> String {
        guard response.statusCode == 200 else {
            let kind: OAuthError.Kind =
                [408, 429].contains(response.statusCode) || response.statusCode >= 500
                ? .transient : .invalidConfiguration
            let body = QuotedText.quote(String(decoding: response.body.prefix(512), as: UTF8.self), hiding: secrets)
            throw OAuthError(
                kind,
                "the \(purpose) request to \(GrantRequest.redacted(url)) was answered HTTP \(response.statusCode)\(body.isEmpty ? "" : ": \(body)")"
            )
        }
        guard let text = String(data: response.body, encoding: .utf8) else {
            throw OAuthError(
                .invalidConfiguration,
                "\(GrantRequest.redacted(url)) answered with text that is not UTF-8"
            )
        }
        return text
    }

    private func variable(_ name: String) -> String? {
        environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }
}
