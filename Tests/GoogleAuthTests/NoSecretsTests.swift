import AuthRPC
import Foundation
import GoogleAuth
import OAuth2
import OAuth2TestSupport
import TestSupport
import Testing

/// Private keys, assertions, JWTs, tokens, client secrets and refresh tokens never reach a log
/// line, a `description` or an error message, on success and failure paths alike.
@Suite("Google credentials: no secrets in logs, descriptions or errors")
struct GoogleNoSecretsTests {
    @Test("service account, self-signed JWT, authorized user, metadata server and ADC: every text is free of secrets")
    func everythingIsRedacted() async throws {
        let google = try await GoogleSandbox.shared()
        let capture = LogCapture()
        let logger = capture.logger(label: "google")
        var texts: [String] = []
        var secrets: [String] = []

        // Service account: a granted token, then a refused grant.
        let keyJSON = try Data(contentsOf: URL(fileURLWithPath: google.serviceAccountKeyPath))
        let privateKeyLines = keyJSON.jsonString("private_key").split(separator: "\n").filter { !$0.hasPrefix("-----") }
            .map(String.init)
        secrets += privateKeyLines
        let key = try ServiceAccountKey(contentsOfFile: google.serviceAccountKeyPath)
        let recorder = RecordingTransport()
        let granted = try ServiceAccountTokenSource(
            key: key,
            scopes: [ServiceConfiguration.googleTestScope],
            transport: recorder,
            logger: logger
        )
        let token = try await granted.fetchToken()
        secrets += [token.accessToken, try #require(recorder.lastForm?.last?.1)]
        texts += [
            key.description, "\(key)", String(reflecting: key), granted.description, token.description, "\(token)",
            key.identity.description,
        ]
        let refusedSource = try ServiceAccountTokenSource(
            key: key,
            scopes: [ServiceConfiguration.googleTestScope],
            subject: "stranger@example.com",
            transport: recorder,
            logger: logger
        )
        let refused = try await #require(throws: OAuthError.self) { try await refusedSource.fetchToken() }
        secrets.append(try #require(recorder.lastForm?.last?.1))
        texts += [refused.description, refused.message, "\(refused)"]
        let badKey = try #require(throws: OAuthError.self) {
            try ServiceAccountKey(
                json: keyJSON.editingJSON([
                    "private_key": keyJSON.jsonString("private_key").replacingOccurrences(of: "MII", with: "XXX")
                ])
            )
        }
        texts += [badKey.message]

        // Self-signed JWT.
        let jwtSource = try ServiceAccountJWTAccessSource(key: key, audience: .forAuthority(google.authority))
        let jwt = try await jwtSource.fetchToken()
        secrets.append(jwt.accessToken)
        texts += [jwtSource.description, jwt.description]
        _ = try await google.whoAmI(CallOptions(credentials: .accessToken(jwt.accessToken)))

        // Authorized user: refreshed, then revoked.
        let userJSON = try await google.newAuthorizedUser(quotaProjectID: "p")
        secrets += [userJSON.jsonString("refresh_token"), userJSON.jsonString("client_secret")]
        let user = try AuthorizedUserCredentials(json: userJSON)
        let userSource = try AuthorizedUserTokenSource(
            credentials: user,
            tokenEndpoint: google.tokenEndpoint,
            logger: logger
        )
        let userToken = try await userSource.fetchToken()
        secrets.append(userToken.accessToken)
        try await google.revokeEverything(of: user.clientID)
        let revoked = try await #require(throws: OAuthError.self) { try await userSource.fetchToken() }
        texts += [
            user.description, userSource.description, userToken.description, revoked.message, revoked.description,
            user.identity.description,
        ]

        // Metadata server.
        let metadata = try ComputeEngineTokenSource(host: google.metadataHost, logger: logger)
        let metadataToken = try await metadata.fetchToken()
        secrets.append(metadataToken.accessToken)
        texts += [metadata.description, metadataToken.description]

        // ADC: what was found, for each kind.
        for variables in [
            ["GOOGLE_APPLICATION_CREDENTIALS": google.serviceAccountKeyPath],
            ["GOOGLE_APPLICATION_CREDENTIALS": google.authorizedUserPath],
            ["GCE_METADATA_HOST": google.metadataHost],
        ] {
            let resolved = try ApplicationDefaultCredentials.resolve(in: .init(variables: variables))
            texts += [
                resolved.description, resolved.credential.description, resolved.identity.description, "\(resolved)",
            ]
        }

        #expect(
            capture.all.contains { $0.contains("asking for a service-account token") },
            "the capture saw the sources' logs"
        )
        for secret in secrets {
            #expect(secret.count >= 16)
            for line in capture.all + texts {
                #expect(!line.contains(secret), "a secret leaked into: \(line.prefix(120))")
            }
        }
    }
    @Test(
        "GoogleCredentials of every kind: calls, refusals and failures leave no key, assertion, JWT or token in logs, descriptions or errors"
    )
    func providersAreRedacted() async throws {
        let google = try await GoogleSandbox.shared()
        let capture = LogCapture()
        let logger = capture.logger(label: "google-provider")
        let scope = ServiceConfiguration.googleTestScope
        var texts: [String] = []
        var secrets: [String] = []
        let keyJSON = try Data(contentsOf: URL(fileURLWithPath: google.serviceAccountKeyPath))
        secrets += keyJSON.jsonString("private_key").split(separator: "\n").filter { !$0.hasPrefix("-----") }.map(
            String.init
        )
        let key = try ServiceAccountKey(contentsOfFile: google.serviceAccountKeyPath)
        let userJSON = try await google.newAuthorizedUser(quotaProjectID: "quota-p")
        secrets += [userJSON.jsonString("refresh_token"), userJSON.jsonString("client_secret")]
        let user = try AuthorizedUserCredentials(json: userJSON)
        let context = AuthTokenContext(
            authority: google.authority,
            method: MethodDescriptor(service: "grpc.testing.TestService", method: "UnaryCall")
        )

        let working: [GoogleCredentials] = [
            try GoogleCredentials(
                source: ServiceAccountTokenSource(key: key, scopes: [scope], logger: logger),
                logger: logger
            ),
            try GoogleCredentials(selfSignedJWTsFor: key, logger: logger),
            try GoogleCredentials(selfSignedJWTsFor: key, scopes: [scope], logger: logger),
            try GoogleCredentials(
                source: AuthorizedUserTokenSource(
                    credentials: user,
                    tokenEndpoint: google.tokenEndpoint,
                    logger: logger
                ),
                logger: logger
            ),
            try GoogleCredentials(
                source: ComputeEngineTokenSource(host: google.metadataHost, logger: logger),
                logger: logger
            ),
            try GoogleCredentials.applicationDefault(
                scopes: [],
                environment: .init(variables: ["GOOGLE_APPLICATION_CREDENTIALS": google.serviceAccountKeyPath]),
                logger: logger
            ),
        ]
        for credentials in working {
            _ = try await google.call(credentials)
            secrets.append(try #require(credentials.cachedToken(for: context), "\(credentials)"))
            texts += [
                credentials.description, "\(credentials)", String(reflecting: credentials),
                credentials.identity.description,
                credentials.requestMetadata.description,
            ]
        }

        // Refused (a subject the issuer does not know), revoked (the user's grant), unreachable.
        try await google.revokeEverything(of: user.clientID)
        let unreachableKey = try ServiceAccountKey(
            json: keyJSON.editingJSON(["token_uri": "http://127.0.0.1:\(Ports.closed())/token"])
        )
        let failing: [GoogleCredentials] = [
            try GoogleCredentials(
                source: ServiceAccountTokenSource(
                    key: key,
                    scopes: [scope],
                    subject: "stranger@example.com",
                    logger: logger
                ),
                logger: logger
            ),
            try GoogleCredentials(
                source: AuthorizedUserTokenSource(
                    credentials: user,
                    tokenEndpoint: google.tokenEndpoint,
                    logger: logger
                ),
                logger: logger
            ),
            try GoogleCredentials(
                source: ServiceAccountTokenSource(key: unreachableKey, scopes: [scope], logger: logger),
                logger: logger
            ),
        ]
        for credentials in failing {
            let error = await #expect(throws: RPCError.self) { try await google.call(credentials) }
            texts += [
                error?.description ?? "", error?.message ?? "", String(describing: error?.cause),
                credentials.description,
            ]
        }

        #expect(capture.all.contains { $0.contains("getting a token failed") }, "the capture saw the providers' logs")
        for secret in secrets {
            #expect(secret.count >= 16)
            for line in capture.all + texts {
                #expect(!line.contains(secret), "a secret leaked into: \(line.prefix(120))")
            }
        }
    }
}
