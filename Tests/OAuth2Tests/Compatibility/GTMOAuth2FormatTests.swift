import Foundation
import Testing

@testable import OAuth2

@Suite("GTMOAuth2Format")
struct GTMOAuth2FormatTests {
    let oldClient = OAuthClient(id: "old-client.apps.googleusercontent.com", secret: StoreFixtures.clientSecret)

    @Test("a GTMOAuth2 keychain string decodes to a stale session and its identity")
    func realString() throws {
        let string =
            "access_token=ya29.abc&email=user%40example.com&isVerified=1&refresh_token=1%2Fxyz&scope=https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fxapi.zoo&serviceProvider=Google&userID=12345"
        let item = try GTMOAuth2Format.decode(string, client: oldClient)
        #expect(item.state.accessToken == "ya29.abc")
        #expect(item.state.refreshToken == "1/xyz")
        #expect(item.state.scopes == ["https://www.googleapis.com/auth/xapi.zoo"])
        #expect(item.state.grantedScopes == ["https://www.googleapis.com/auth/xapi.zoo"])
        #expect(item.state.client == oldClient)
        #expect(item.state.configuration == .google)
        #expect(item.state.grant.type == .gtmOAuth2Migration)
        #expect(item.state.isAccessTokenStale)
        #expect(item.state.accessTokenExpiresAt == nil)
        #expect(!item.state.isAccessTokenFresh())
        #expect(item.state.isAuthorized)
        #expect(item.serviceProvider == "Google")
        #expect(item.userID == "12345")
        #expect(item.userEmail == "user@example.com")
        #expect(item.userEmailIsVerified == true)
        // GTMOAuth2 wrote exactly this, so writing it back gives the same string.
        #expect(GTMOAuth2Format.encode(item) == string)
    }

    @Test("the later userEmail/userEmailIsVerified names are read too")
    func laterKeyNames() throws {
        let item = try GTMOAuth2Format.decode(
            "refresh_token=r&userEmail=a%40b.c&userEmailIsVerified=false",
            client: oldClient
        )
        #expect(item.userEmail == "a@b.c")
        #expect(item.userEmailIsVerified == false)
        #expect(GTMOAuth2Format.encode(item) == "email=a%40b.c&isVerified=0&refresh_token=r")
    }

    @Test(
        "isVerified values",
        arguments: [("1", true), ("true", true), ("YES", true), ("0", false), ("false", false), ("no", false)]
    )
    func isVerifiedValues(text: String, expected: Bool) throws {
        #expect(
            try GTMOAuth2Format.decode("refresh_token=r&isVerified=\(text)", client: oldClient).userEmailIsVerified
                == expected
        )
    }

    @Test("an unrecognized or absent isVerified is unknown")
    func isVerifiedUnknown() throws {
        #expect(
            try GTMOAuth2Format.decode("refresh_token=r&isVerified=maybe", client: oldClient).userEmailIsVerified == nil
        )
        #expect(try GTMOAuth2Format.decode("refresh_token=r", client: oldClient).userEmailIsVerified == nil)
    }

    @Test("each pair splits on its first '=' only")
    func firstEqualsOnly() throws {
        let item = try GTMOAuth2Format.decode("access_token=a=b==&refresh_token=r=1", client: oldClient)
        #expect(item.state.accessToken == "a=b==")
        #expect(item.state.refreshToken == "r=1")
    }

    @Test("duplicate keys are tolerated; the last value wins, across both spellings")
    func duplicateKeys() throws {
        let item = try GTMOAuth2Format.decode(
            "refresh_token=old&email=first%40x&refresh_token=new&userEmail=second%40x&&scope=a",
            client: oldClient
        )
        #expect(item.state.refreshToken == "new")
        #expect(item.userEmail == "second@x")
        #expect(item.state.scopes == ["a"])
    }

    @Test("'+' is a literal plus, not a space")
    func plusIsLiteral() throws {
        let item = try GTMOAuth2Format.decode("refresh_token=a+b&scope=x%20y+z", client: oldClient)
        #expect(item.state.refreshToken == "a+b")
        #expect(item.state.scopes == ["x", "y+z"])
    }

    @Test("reserved characters, spaces and non-ASCII round-trip, and the output has no raw reserved character")
    func reservedRoundTrip() throws {
        let awkward = "a%b#c[d]e&f=g+h i/é?😀"
        let state = AuthState(
            configuration: .google,
            client: oldClient,
            scopes: ["s1", "s2+x"],
            grant: GrantRecord(type: .gtmOAuth2Migration),
            accessToken: "access " + awkward,
            refreshToken: "refresh " + awkward,
            grantedScopes: ["s1", "s2+x"]
        )
        let item = GTMOAuth2Item(
            state: state,
            serviceProvider: "Prov " + awkward,
            userID: "id " + awkward,
            userEmail: "mail " + awkward,
            userEmailIsVerified: false
        )
        let encoded = GTMOAuth2Format.encode(item)

        let pairs = encoded.split(separator: "&").map { $0.split(separator: "=", omittingEmptySubsequences: false) }
        #expect(pairs.allSatisfy { $0.count == 2 })
        let keys = pairs.map { String($0[0]) }
        #expect(keys == ["access_token", "email", "isVerified", "refresh_token", "scope", "serviceProvider", "userID"])
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%")
        for pair in pairs {
            #expect(pair[1].allSatisfy(allowed.contains), "raw reserved character in \(pair[1])")
        }
        #expect(
            encoded.contains("%25") && encoded.contains("%23") && encoded.contains("%5B") && encoded.contains("%5D")
        )
        #expect(
            encoded.contains("%26") && encoded.contains("%3D") && encoded.contains("%2B") && encoded.contains("%20")
        )

        let decoded = try GTMOAuth2Format.decode(encoded, client: oldClient)
        #expect(decoded.state.accessToken == state.accessToken)
        #expect(decoded.state.refreshToken == state.refreshToken)
        #expect(decoded.state.scopes == ["s1", "s2+x"])
        #expect(decoded.serviceProvider == item.serviceProvider)
        #expect(decoded.userID == item.userID)
        #expect(decoded.userEmail == item.userEmail)
        #expect(decoded.userEmailIsVerified == false)
    }

    @Test("absent values are left out, and a string without scope takes the fallback scopes")
    func absentValues() throws {
        let item = try GTMOAuth2Format.decode("refresh_token=r", client: oldClient, fallbackScopes: ["fallback"])
        #expect(item.state.scopes == ["fallback"])
        #expect(item.state.grantedScopes == nil)
        #expect(item.state.accessToken == nil)
        #expect(item.serviceProvider == nil && item.userID == nil && item.userEmail == nil)
        #expect(GTMOAuth2Format.encode(item) == "refresh_token=r&scope=fallback")
    }

    @Test("the given configuration is kept")
    func configuration() throws {
        let custom = ServiceConfiguration(tokenEndpoint: URL(string: "https://auth.example.com/token")!)
        let item = try GTMOAuth2Format.decode("refresh_token=r", client: oldClient, configuration: custom)
        #expect(item.state.configuration == custom)
    }

    @Test(
        "a string without a refresh token is a clear storage error without the access token",
        arguments: [
            "access_token=\(StoreFixtures.accessToken)&scope=a",
            "access_token=\(StoreFixtures.accessToken)&refresh_token=",
            "",
        ]
    )
    func noRefreshToken(string: String) throws {
        do {
            _ = try GTMOAuth2Format.decode(string, client: oldClient)
            Issue.record("expected an error")
        } catch {
            #expect(error.kind == .storage)
            #expect(error.message.contains("refresh_token"))
            StoreFixtures.expectNoSecrets(error.message)
        }
    }

    @Test("an item's description shows the identity but no token or secret")
    func description() throws {
        let item = try GTMOAuth2Format.decode(
            "access_token=\(StoreFixtures.accessToken)&email=u%40x&refresh_token=\(StoreFixtures.refreshToken)&userID=42",
            client: oldClient
        )
        #expect(item.description.contains("u@x") && item.description.contains("42"))
        StoreFixtures.expectNoSecrets(item.description)
        StoreFixtures.expectNoSecrets(String(describing: item))
    }
}
