import AuthRPC
import AuthSampleService
import Foundation
import GoogleAuth
import OAuth2
import TestSupport
import Testing

/// Workload identity federation end to end: each subject-token source against the sandbox's
/// peers (the OIDC provider whose JWKS the STS emulator verifies tokens with, the AWS emulator
/// whose botocore check verifies our SigV4, a credential helper program), exchanged at the STS
/// emulator, then used on a gRPC call whose server names the federated principal.
@Suite("external_account credentials", .timeLimit(.minutes(3)))
struct ExternalAccountTests {
    static let scope = "https://www.googleapis.com/auth/cloud-platform"

    /// The credentials of `file` made into a provider through Application Default Credentials,
    /// as a program finds them (`GOOGLE_APPLICATION_CREDENTIALS`).
    static func credentials(
        file path: String,
        environment: [String: String] = [:]
    ) throws -> GoogleCredentials {
        let resolved = try ApplicationDefaultCredentials.resolve(
            in: ApplicationDefaultCredentials.Environment(
                variables: ["GOOGLE_APPLICATION_CREDENTIALS": path, "HOME": "/nonexistent"].merging(environment) { $1 },
                productNamePath: "/nonexistent"
            )
        )
        return try GoogleCredentials(resolved, scopes: [scope])
    }

    /// The token of `file`'s credentials, or the error they gave.
    static func fetch(
        file path: String,
        environment: [String: String] = [:]
    ) async throws -> Result<
        FetchedAccessToken, OAuthError
    > {
        let resolved = try ApplicationDefaultCredentials.resolve(
            in: ApplicationDefaultCredentials.Environment(
                variables: ["GOOGLE_APPLICATION_CREDENTIALS": path, "HOME": "/nonexistent"].merging(environment) { $1 },
                productNamePath: "/nonexistent"
            )
        )
        let source = try resolved.tokenSource(scopes: [scope])
        do throws(OAuthError) { return .success(try await source.fetchToken()) } catch { return .failure(error) }
    }

    @Test("file source (JSON): the exchange carries every RFC 8693 field, and the call is the pool's principal")
    func fileSource() async throws {
        let federation = try await FederationSandbox.make()
        let scratch = try ScratchDirectory()
        let audience = federation.audience()
        let subject = try await federation.mint(audience: audience)
        let tokenPath = try scratch.write(Data(#"{"id_token": "\#(subject)"}"#.utf8), to: "token.json")
        let file = try scratch.write(
            federation.credentialFile(
                audience: audience,
                source: ["file": tokenPath, "format": ["type": "json", "subject_token_field_name": "id_token"]]
            ),
            to: "external.json"
        )
        let credentials = try Self.credentials(file: file)
        #expect(credentials.identity.kind == .externalAccount)
        #expect(credentials.identity.principal == audience)
        let response = try await federation.google.call(credentials)
        #expect(
            response.message.username == federation.principal(subject: "repo:octo-org/octo-repo:ref:refs/heads/main")
        )

        let exchanges = try await federation.exchanges(for: audience)
        let form = try #require(exchanges.first?["form"] as? [String: String])
        #expect(exchanges.count == 1)
        #expect(
            form == [
                "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
                "audience": audience,
                "scope": Self.scope,
                "requested_token_type": "urn:ietf:params:oauth:token-type:access_token",
                "subject_token": subject,
                "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
            ]
        )
        #expect(exchanges.first?["authorization"] is NSNull)
    }

    @Test("an expired or foreign subject token: the error names the file, the source and the STS step, never the token")
    func refusedSubjectToken() async throws {
        let federation = try await FederationSandbox.make()
        let scratch = try ScratchDirectory()
        let audience = federation.audience()
        for subject in [
            try await federation.mint(audience: audience, expired: true),
            try await federation.mint(audience: federation.audience(provider: "another")),
        ] {
            let tokenPath = try scratch.write(Data(subject.utf8), to: "token")
            let file = try scratch.write(
                federation.credentialFile(audience: audience, source: ["file": tokenPath]),
                to: "external.json"
            )
            let error = try #require(try await Self.fetch(file: file).failure)
            #expect(error.kind == .authorization)
            #expect(error.oauthErrorCode == "invalid_grant")
            #expect(
                error.message.hasPrefix(
                    "\(file) (file source): exchanging the subject token at the Security Token Service"
                ),
                "\(error.message)"
            )
            #expect(!error.message.contains(subject) && !String(describing: error).contains("eyJ"))
        }
        let missing = try scratch.write(
            federation.credentialFile(audience: audience, source: ["file": scratch.path + "/absent"]),
            to: "missing.json"
        )
        let error = try #require(try await Self.fetch(file: missing).failure)
        #expect(error.kind == .invalidConfiguration)
        #expect(
            error.message.contains("(file source): reading the subject token from \(scratch.path)/absent"),
            "\(error.message)"
        )
    }

    @Test(
        "url source as google-github-actions/auth writes it: ACTIONS_ID_TOKEN_REQUEST_URL with the audience, the bearer request token"
    )
    func gitHubActionsURLSource() async throws {
        let federation = try await FederationSandbox.make()
        let scratch = try ScratchDirectory()
        let audience = federation.audience()
        var url = URLComponents(string: federation.actionsRequestURL)!
        url.queryItems = (url.queryItems ?? []) + [URLQueryItem(name: "audience", value: "https:" + audience)]
        let source: [String: any Sendable] = [
            "url": url.string!,
            "headers": ["Authorization": "Bearer \(federation.actionsRequestToken)"],
            "format": ["type": "json", "subject_token_field_name": "value"],
        ]
        let file = try scratch.write(
            federation.credentialFile(audience: audience, source: source),
            to: "gha-creds.json"
        )
        let response = try await federation.google.call(try Self.credentials(file: file))
        #expect(
            response.message.username == federation.principal(subject: "repo:octo-org/octo-repo:ref:refs/heads/main")
        )

        // A wrong request token: the source's refusal, named, without the bearer token.
        let wrong = try scratch.write(
            federation.credentialFile(
                audience: audience,
                source: source.merging(["headers": ["Authorization": "Bearer not-\(federation.actionsRequestToken)"]]) {
                    $1
                }
            ),
            to: "wrong.json"
        )
        let error = try #require(try await Self.fetch(file: wrong).failure)
        #expect(error.message.contains("(url source): reading the subject token from"), "\(error.message)")
        #expect(error.message.contains("answered HTTP 401"), "\(error.message)")
        #expect(!error.message.contains(federation.actionsRequestToken))
    }

    @Test("a url source that redirects, answers 10 MB or trickles is refused, bounded and named")
    func hostileURLSource() async throws {
        let federation = try await FederationSandbox.make()
        let scratch = try ScratchDirectory()
        let audience = federation.audience()
        let base = federation.oidcIssuer.absoluteString + "/metadata/identity/oauth2/token?resource=https:" + audience
        let file = try scratch.write(
            federation.credentialFile(
                audience: audience,
                source: [
                    "url": base, "headers": ["Metadata": "True"],
                    "format": ["type": "json", "subject_token_field_name": "access_token"],
                ]
            ),
            to: "azure.json"
        )
        #expect(try await Self.fetch(file: file).failure == nil)
        defer { Task { try? await federation.oidcBehaviour("azure", "normal") } }
        try await federation.oidcBehaviour("azure", "redirect")
        let redirected = try #require(try await Self.fetch(file: file).failure)
        #expect(redirected.message.contains("(url source): reading the subject token"), "\(redirected.message)")
        #expect(redirected.message.contains("redirect"), "\(redirected.message)")
        try await federation.oidcBehaviour("azure", "huge")
        let huge = try #require(try await Self.fetch(file: file).failure)
        #expect(huge.message.contains("(url source): reading the subject token"), "\(huge.message)")
        #expect(huge.message.utf8.count < 2048)
        // One byte every half second: the source's 30 s deadline ends it, however long the
        // server would go on.
        try await federation.oidcBehaviour("azure", "trickle")
        let trickled = try #require(try await Self.fetch(file: file).failure)
        #expect(trickled.kind == .transient, "\(trickled.message)")
        #expect(trickled.message.contains("(url source): reading the subject token"), "\(trickled.message)")
        #expect(trickled.message.contains("30"), "\(trickled.message)")
        try await federation.oidcBehaviour("azure", "normal")
    }

    @Test("STS that fails with 503 is transient and named; its OAuth error text is quoted printable")
    func stsFailure() async throws {
        let federation = try await FederationSandbox.make()
        let scratch = try ScratchDirectory()
        let audience = federation.audience()
        let tokenPath = try scratch.write(Data(try await federation.mint(audience: audience).utf8), to: "token")
        let file = try scratch.write(
            federation.credentialFile(audience: audience, source: ["file": tokenPath]),
            to: "external.json"
        )
        try await federation.stsBehaviour(audience: audience, status: 503)
        let error = try #require(try await Self.fetch(file: file).failure)
        #expect(error.kind == .transient)
        #expect(
            error.message.contains("exchanging the subject token at the Security Token Service"),
            "\(error.message)"
        )
    }

    @Test(
        "workforce pool: workforce_pool_user_project goes as options.userProject; with a client, HTTP Basic and no options"
    )
    func workforcePool() async throws {
        let federation = try await FederationSandbox.make()
        let scratch = try ScratchDirectory()
        let audience = "//iam.googleapis.com/locations/global/workforcePools/\(federation.pool)/providers/oidc-users"
        let tokenPath = try scratch.write(Data(try await federation.mint(audience: audience).utf8), to: "token")
        let file = try scratch.write(
            federation.credentialFile(
                audience: audience,
                subjectTokenType: "urn:ietf:params:oauth:token-type:id_token",
                source: ["file": tokenPath],
                extra: ["workforce_pool_user_project": "billed-project-1"]
            ),
            to: "workforce.json"
        )
        let token = try #require(try await Self.fetch(file: file).success)
        #expect(!token.accessToken.isEmpty)
        let form = try #require(try await federation.exchanges(for: audience).first?["form"] as? [String: String])
        #expect(form["options"] == #"{"userProject":"billed-project-1"}"#)
        #expect(form["subject_token_type"] == "urn:ietf:params:oauth:token-type:id_token")

        let withoutProject = try scratch.write(
            federation.credentialFile(
                audience: audience,
                subjectTokenType: "urn:ietf:params:oauth:token-type:id_token",
                source: ["file": tokenPath]
            ),
            to: "no-project.json"
        )
        let refused = try #require(try await Self.fetch(file: withoutProject).failure)
        #expect(refused.oauthErrorCode == "invalid_request", "\(refused.message)")

        let client = try await federation.newClient()
        let clientID = try #require(client["client_id"])
        let secret = try #require(client["client_secret"])
        let withClient = try scratch.write(
            federation.credentialFile(
                audience: audience,
                subjectTokenType: "urn:ietf:params:oauth:token-type:id_token",
                source: ["file": tokenPath],
                extra: [
                    "client_id": clientID, "client_secret": secret, "workforce_pool_user_project": "billed-project-1",
                ]
            ),
            to: "client.json"
        )
        #expect(try await Self.fetch(file: withClient).success != nil)
        let last = try #require(try await federation.exchanges(for: audience).last)
        #expect(last["authorization"] as? String == "Basic " + Data("\(clientID):\(secret)".utf8).base64EncodedString())
        #expect((last["form"] as? [String: String])?["options"] == nil)
        #expect(!String(describing: try ExternalAccountCredentials(contentsOfFile: withClient)).contains(secret))
    }

    @Test("external_account_authorized_user: refreshed at its token_url with HTTP Basic; its quota project is sent")
    func workforceUser() async throws {
        let federation = try await FederationSandbox.make()
        let scratch = try ScratchDirectory()
        let document = try await federation.newWorkforceUser(quotaProjectID: "workforce-quota")
        let file = try scratch.write(document, to: "adc.json")
        let credentials = try Self.credentials(file: file)
        #expect(credentials.identity.kind == .externalAccountAuthorizedUser)
        #expect(credentials.identity.quotaProjectID == "workforce-quota")
        let response = try await federation.google.call(credentials)
        #expect(
            response.message.username.hasSuffix("/subject/workforce-user@example.com"),
            "\(response.message.username)"
        )
        #expect(response.trailers.strings(forKey: "x-sandbox-user-project") == ["workforce-quota"])

        let object = try JSONSerialization.jsonObject(with: document) as! [String: Any]
        let refreshToken = object["refresh_token"] as! String
        let secret = object["client_secret"] as! String
        let wrong = try scratch.write(try document.editingJSON(["client_secret": "wrong-secret"]), to: "wrong.json")
        let error = try #require(try await Self.fetch(file: wrong).failure)
        #expect(error.message.hasPrefix("\(wrong): refreshing the workforce pool user's token at"), "\(error.message)")
        #expect(!error.message.contains(refreshToken) && !error.message.contains(secret))
        #expect(!String(describing: credentials).contains(refreshToken))
    }

    @Test("token_url and the impersonation URL must be https (http only to loopback); a source URL with a secret too")
    func plainHTTPRefused() async throws {
        let federation = try await FederationSandbox.make()
        let scratch = try ScratchDirectory()
        let audience = federation.audience()
        for (extra, field) in [
            (["token_url": "http://sts.googleapis.com/v1/token"], "token_url"),
            (
                [
                    "service_account_impersonation_url":
                        "http://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/a@b.iam.gserviceaccount.com:generateAccessToken"
                ],
                "service_account_impersonation_url"
            ),
        ] {
            let file = try scratch.write(
                federation.credentialFile(audience: audience, source: ["file": "/dev/null"], extra: extra),
                to: "plain.json"
            )
            let error = try #require(throws: OAuthError.self) { try ExternalAccountCredentials(contentsOfFile: file) }
            #expect(error.message.contains("\(field) in \(file) is http://"), "\(error.message)")
            #expect(error.message.contains("must be https"), "\(error.message)")
        }
        // A url source over plain http to a host that is neither loopback nor a metadata server,
        // with a bearer token: refused before anything is sent (the name does not even resolve).
        let file = try scratch.write(
            federation.credentialFile(
                audience: audience,
                source: [
                    "url": "http://token.example.invalid/token",
                    "headers": ["Authorization": "Bearer secret-request-token"],
                ]
            ),
            to: "bearer.json"
        )
        let error = try #require(try await Self.fetch(file: file).failure)
        #expect(error.kind == .invalidConfiguration)
        #expect(error.message.contains("OAuth endpoints must use https"), "\(error.message)")
        #expect(!error.message.contains("secret-request-token"))
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
    var success: Success? {
        if case .success(let value) = self { return value }
        return nil
    }
}
