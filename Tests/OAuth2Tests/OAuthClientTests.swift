import Foundation
import Testing

@testable import OAuth2

@Suite("OAuthClient and its authentication methods")
struct OAuthClientTests {
    static let methods: [(ClientAuthenticationMethod, String)] = [
        (.none, "none"), (.clientSecretBasic, "client_secret_basic"), (.clientSecretPost, "client_secret_post"),
    ]

    @Test("each method is named as in the OAuth registry, and the name gives back the method")
    func names() {
        for (method, name) in Self.methods {
            #expect(method.rawValue == name)
            #expect(method.description == name)
            #expect(ClientAuthenticationMethod(rawValue: name) == method)
        }
        #expect(Set(Self.methods.map(\.0)).count == 3)
        #expect(ClientAuthenticationMethod(rawValue: "private_key_jwt") == nil)
        #expect(ClientAuthenticationMethod(rawValue: "Client_Secret_Basic") == nil)
    }

    @Test("without a method, a client with a secret uses client_secret_basic and one without uses none")
    func defaults() {
        #expect(OAuthClient(id: "c", secret: "s").authentication == .clientSecretBasic)
        #expect(OAuthClient(id: "c").authentication == .none)
        #expect(
            OAuthClient(id: "c", secret: "s", authentication: .clientSecretPost).authentication == .clientSecretPost
        )
    }

    @Test("a client is stored with the method's name, and a name this version does not know fails to decode")
    func coding() throws {
        for (method, name) in Self.methods {
            let client = OAuthClient(id: "c", authentication: method)
            let json = try JSONSerialization.jsonObject(with: try JSONEncoder().encode(client)) as? [String: Any]
            #expect(json?["authentication"] as? String == name)
            #expect(try JSONDecoder().decode(OAuthClient.self, from: try JSONEncoder().encode(client)) == client)
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(
                OAuthClient.self,
                from: Data(#"{"id":"c","authentication":"private_key_jwt"}"#.utf8)
            )
        }
    }

    @Test("requests authenticate the client as its method says")
    func formRequests() throws {
        let url = URL(string: "https://issuer.test/token")!
        let basic = OAuthHTTP.formRequest(to: url, parameters: [], client: OAuthClient(id: "c", secret: "s"))
        let authorization = basic.headers.first { $0.name == "Authorization" }?.value
        #expect(authorization == "Basic " + Data("c:s".utf8).base64EncodedString())
        #expect(String(decoding: basic.body ?? Data(), as: UTF8.self).isEmpty)

        let post = OAuthHTTP.formRequest(
            to: url,
            parameters: [],
            client: OAuthClient(id: "c", secret: "s", authentication: .clientSecretPost)
        )
        #expect(!post.headers.contains { $0.name == "Authorization" })
        #expect(String(decoding: post.body ?? Data(), as: UTF8.self) == "client_id=c&client_secret=s")

        let none = OAuthHTTP.formRequest(to: url, parameters: [], client: OAuthClient(id: "c"))
        #expect(!none.headers.contains { $0.name == "Authorization" })
        #expect(String(decoding: none.body ?? Data(), as: UTF8.self) == "client_id=c")
    }
}
