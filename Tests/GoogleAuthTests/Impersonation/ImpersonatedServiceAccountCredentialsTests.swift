import Foundation
import GoogleAuth
import OAuth2
import Testing

@Suite("impersonated_service_account files: read strictly, errors name the field and never a secret")
struct ImpersonatedServiceAccountCredentialsTests {
    static var user: [String: Any] {
        [
            "type": "authorized_user", "client_id": "client-1", "client_secret": "SECRET-client",
            "refresh_token": "SECRET-refresh",
        ]
    }
    static let url =
        "https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/t@p.iam.gserviceaccount.com:generateAccessToken"

    private func read(_ changes: [String: Any?]) throws(OAuthError) -> ImpersonatedServiceAccountCredentials {
        var document: [String: Any] = [
            "type": "impersonated_service_account", "delegates": [], "service_account_impersonation_url": Self.url,
            "source_credentials": Self.user,
        ]
        for (key, value) in changes { document[key] = value }
        let data = try! JSONSerialization.data(withJSONObject: document)
        return try ImpersonatedServiceAccountCredentials(json: data, source: "/tmp/adc.json")
    }

    @Test("gcloud's file: target from the URL, delegates prefixed, the generateIdToken URL beside it")
    func gcloudsFile() throws {
        let credentials = try read(["delegates": ["d@p.iam.gserviceaccount.com"], "quota_project_id": "q"])
        #expect(credentials.targetPrincipal == "t@p.iam.gserviceaccount.com")
        #expect(credentials.delegates == ["projects/-/serviceAccounts/d@p.iam.gserviceaccount.com"])
        #expect(credentials.sourceCredential.authorizedUserCredentials?.clientID == "client-1")
        #expect(credentials.quotaProjectID == "q")
        #expect(credentials.idTokenURL.absoluteString.hasSuffix("t@p.iam.gserviceaccount.com:generateIdToken"))
        #expect(!credentials.description.contains("SECRET"))
    }

    @Test("what is refused, each with a message naming the field and never a secret")
    func refused() {
        let cases: [([String: Any?], String)] = [
            (["source_credentials": nil], "source_credentials"),
            (["source_credentials": "text"], "source_credentials"),
            (["source_credentials": ["type": "external_account", "audience": "SECRET-x"]], "external_account"),
            (
                ["source_credentials": ["type": "authorized_user", "client_id": "c", "refresh_token": "SECRET-r"]],
                "client_secret"
            ),
            (["service_account_impersonation_url": nil], "service_account_impersonation_url"),
            (
                ["service_account_impersonation_url": "https://iamcredentials.googleapis.com/v1/x"],
                "service_account_impersonation_url"
            ),
            (
                [
                    "service_account_impersonation_url":
                        "http://iam.example.com/v1/projects/-/serviceAccounts/t@p.iam.gserviceaccount.com:generateAccessToken"
                ],
                "https"
            ),
            (["delegates": "d@p"], "delegates"),
            (["delegates": ["not an email"]], "delegate"),
            (["type": "service_account"], "not impersonated_service_account"),
        ]
        for (changes, expected) in cases {
            let error = #expect(throws: OAuthError.self, "\(changes)") { try read(changes) }
            #expect(error?.kind == .invalidConfiguration)
            #expect(error?.message.contains(expected) == true, "\(error?.message ?? "")")
            #expect(error?.message.contains("SECRET") == false)
        }
    }
}
