import AuthRPC
import Foundation
import GoogleAuth
import OAuth2
import TestSupport
import Testing

@Suite("Authorized users: gcloud's ADC file refreshed with the refresh-token grant")
struct AuthorizedUserTests {
    @Test("the sandbox's file reads: client id and quota project, no secret in the description")
    func reads() async throws {
        let google = try await GoogleSandbox.shared()
        let json = try Data(contentsOf: URL(fileURLWithPath: google.authorizedUserPath))
        let credentials = try AuthorizedUserCredentials(contentsOfFile: google.authorizedUserPath)
        #expect(credentials.clientID == json.jsonString("client_id"))
        #expect(credentials.quotaProjectID == google.quotaProjectID)
        #expect(
            credentials.identity
                == GoogleCredentialIdentity(
                    kind: .authorizedUser,
                    principal: credentials.clientID,
                    source: google.authorizedUserPath,
                    quotaProjectID: google.quotaProjectID
                )
        )
        for text in [credentials.description, "\(credentials)", credentials.identity.description] {
            #expect(!text.contains(json.jsonString("client_secret")))
            #expect(!text.contains(json.jsonString("refresh_token")))
        }
    }

    @Test("refreshing at the sandbox's token endpoint gives tokens that call as the user, again and again")
    func refreshes() async throws {
        let google = try await GoogleSandbox.shared()
        let credentials = try AuthorizedUserCredentials(json: try await google.newAuthorizedUser())
        let source = try AuthorizedUserTokenSource(credentials: credentials, tokenEndpoint: google.tokenEndpoint)
        let first = try await source.fetchToken()
        let second = try await source.fetchToken()
        #expect(first.accessToken != second.accessToken)
        #expect(first.lifetime == .seconds(3600))
        for token in [first, second] {
            #expect(try await google.whoAmI(token: token.accessToken).user == google.sandbox.user)
        }
        #expect(try await google.issuerCounters(of: credentials.clientID)["refresh_requests"] == 2)
    }

    @Test("a revoked refresh token is an authorization error (invalid_grant) without secrets in it")
    func revoked() async throws {
        let google = try await GoogleSandbox.shared()
        let json = try await google.newAuthorizedUser()
        let credentials = try AuthorizedUserCredentials(json: json)
        try await google.revokeEverything(of: credentials.clientID)
        let source = try AuthorizedUserTokenSource(credentials: credentials, tokenEndpoint: google.tokenEndpoint)
        let error = try await #require(throws: OAuthError.self) { try await source.fetchToken() }
        #expect(error.oauthErrorCode == "invalid_grant")
        #expect(!error.message.contains(json.jsonString("refresh_token")))
        #expect(!error.message.contains(json.jsonString("client_secret")))
    }

    @Test("a token_uri in the file is ignored: refreshes go to Google's endpoint unless the caller says otherwise")
    func fileCannotRedirect() throws {
        let json = Data(
            #"{"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r", "token_uri": "http://127.0.0.1:9/steal"}"#
                .utf8
        )
        let source = try AuthorizedUserTokenSource(credentials: AuthorizedUserCredentials(json: json))
        #expect(source.tokenEndpoint == URL(string: "https://oauth2.googleapis.com/token")!)
        #expect(throws: OAuthError.self) {
            try AuthorizedUserTokenSource(
                credentials: AuthorizedUserCredentials(json: json),
                tokenEndpoint: URL(string: "http://example.com/token")!
            )
        }
    }

    @Test("missing fields are named, their values never quoted")
    func badFields() throws {
        let good = Data(
            #"{"type": "authorized_user", "client_id": "c", "client_secret": "secret-value-1", "refresh_token": "refresh-value-1"}"#
                .utf8
        )
        for (field, says) in [
            ("client_id", "has no client_id"), ("client_secret", "has no client_secret"),
            ("refresh_token", "has no refresh_token"),
        ] {
            let error = try #require(throws: OAuthError.self) {
                try AuthorizedUserCredentials(json: try good.editingJSON([field: nil]))
            }
            #expect(error.message.contains(says))
        }
        let error = try #require(throws: OAuthError.self) {
            try AuthorizedUserCredentials(json: try good.editingJSON(["refresh_token": "has a space"]))
        }
        #expect(error.message.contains("refresh_token"))
        #expect(!error.message.contains("has a space") && !error.message.contains("secret-value-1"))
    }
}
