import AuthRPC
import Foundation
import GoogleAuth
import OAuth2
import OAuth2TestSupport
import Testing

/// A credential's `universe_domain` against the universe of the endpoints it is used with.
@Suite("Universe domains: credentials of another universe are refused before anything is sent")
struct UniverseDomainTests {
    static let universe = "example-universe.test"

    @Test("keys and authorized_user files say their universe; googleapis.com when they do not")
    func universeOfAFile() async throws {
        let google = try await GoogleSandbox.shared()
        let plain = try ServiceAccountKey(json: try await google.newServiceAccountKey())
        #expect(plain.identity.universeDomain == "googleapis.com")
        let other = try ServiceAccountKey(
            json: try await google.newServiceAccountKey().editingJSON(["universe_domain": Self.universe])
        )
        #expect(other.identity.universeDomain == Self.universe)
        #expect(other.identity.description.hasSuffix(", universe \(Self.universe)"))
        let user = try AuthorizedUserCredentials(
            json: try await google.newAuthorizedUser().editingJSON(["universe_domain": Self.universe])
        )
        #expect(user.identity.universeDomain == Self.universe)
        #expect(try ComputeEngineTokenSource().identity.universeDomain == "googleapis.com")
    }

    @Test(
        "a key of another universe: GoogleCredentials refuses it naming both universes, and its token endpoint is never asked"
    )
    func mismatchRefused() async throws {
        let google = try await GoogleSandbox.shared()
        let key = try ServiceAccountKey(
            json: try await google.newServiceAccountKey().editingJSON(["universe_domain": Self.universe]),
            source: "universe-key.json"
        )
        let transport = RecordingTransport()
        let says =
            "the credential from universe-key.json is for universe \(Self.universe) (universe_domain), but the endpoints are in universe googleapis.com: its tokens would be refused there"
        let grant = try #require(throws: OAuthError.self) {
            try GoogleCredentials(
                source: ServiceAccountTokenSource(
                    key: key,
                    scopes: [ServiceConfiguration.googleTestScope],
                    transport: transport
                )
            )
        }
        #expect(grant.kind == .invalidConfiguration)
        #expect(grant.message == says)
        let selfSigned = try #require(throws: OAuthError.self) { try GoogleCredentials(selfSignedJWTsFor: key) }
        #expect(selfSigned.message == says)
        #expect(transport.sent.isEmpty)

        // The other way round: a googleapis.com key where another universe is expected.
        let plain = try ServiceAccountKey(json: try await google.newServiceAccountKey(), source: "plain-key.json")
        let expectedOther = try #require(throws: OAuthError.self) {
            try GoogleCredentials(selfSignedJWTsFor: plain, universeDomain: Self.universe)
        }
        #expect(expectedOther.message.contains("is for universe googleapis.com (universe_domain)"))
        #expect(expectedOther.message.contains("the endpoints are in universe \(Self.universe)"))
    }

    @Test(
        "credentials of another universe, used there: a call to a googleapis.com host gets no token; one to the universe's hosts does"
    )
    func perCall() async throws {
        let google = try await GoogleSandbox.shared()
        let key = try ServiceAccountKey(
            json: try await google.newServiceAccountKey().editingJSON(["universe_domain": Self.universe])
        )
        let credentials = try GoogleCredentials(selfSignedJWTsFor: key, universeDomain: "Example-Universe.test")
        #expect(credentials.universeDomain == Self.universe)
        for authority in ["pubsub.googleapis.com", "pubsub.googleapis.com.:443", "googleapis.com"] {
            let error = try await #require(throws: OAuthError.self, "\(authority)") {
                try await credentials.freshAccessToken(forAuthority: authority)
            }
            #expect(error.kind == .invalidConfiguration)
            #expect(
                error.message.contains(
                    "in universe googleapis.com, but the credentials are for universe \(Self.universe)"
                )
            )
        }
        let token = try await credentials.freshAccessToken(forAuthority: "pubsub.\(Self.universe):443")
        #expect(jwtPart(token, 1)["aud"] as? String == "https://pubsub.\(Self.universe)/")
    }
}
