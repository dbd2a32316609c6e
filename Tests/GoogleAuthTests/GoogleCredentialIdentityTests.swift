import GoogleAuth
import Testing

@Suite("GoogleCredentialIdentity")
struct GoogleCredentialIdentityTests {
    static let kinds: [(GoogleCredentialIdentity.Kind, String)] = [
        (.serviceAccount, "service_account"), (.authorizedUser, "authorized_user"), (.computeEngine, "compute_engine"),
        (.externalAccount, "external_account"), (.externalAccountAuthorizedUser, "external_account_authorized_user"),
    ]

    @Test("each kind is named as in the credential files' type, and the name gives back the kind")
    func names() {
        for (kind, name) in Self.kinds {
            #expect(kind.rawValue == name)
            #expect(kind.description == name)
            #expect(GoogleCredentialIdentity.Kind(rawValue: name) == kind)
        }
        #expect(Set(Self.kinds.map(\.0)).count == Self.kinds.count)
        #expect(GoogleCredentialIdentity.Kind(rawValue: "gdch_service_account") == nil)
        #expect(GoogleCredentialIdentity.Kind(rawValue: "Service_Account") == nil)
    }

    @Test("the description starts with the kind's name, then who and where")
    func description() {
        let identity = GoogleCredentialIdentity(
            kind: .serviceAccount,
            principal: "sa@project.iam.gserviceaccount.com",
            source: "/keys/key.json",
            quotaProjectID: "billing"
        )
        #expect(
            identity.description
                == "service_account sa@project.iam.gserviceaccount.com (from /keys/key.json), quota project billing"
        )
        #expect(identity == identity)
        var other = identity
        other.kind = .authorizedUser
        #expect(identity != other)
    }
}
