import Foundation
import GoogleAuth
import OAuth2
import OAuth2TestSupport
import TestSupport
import Testing

@Suite("Service-account key files: every field checked, the private key never quoted")
struct ServiceAccountKeyTests {
    /// A key file of the sandbox's, as bytes.
    func keyFile() async throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: try await GoogleSandbox.shared().serviceAccountKeyPath))
    }

    @Test("the sandbox's key file (Google's format) reads: email, key id, token_uri, project")
    func readsGooglesFormat() async throws {
        let google = try await GoogleSandbox.shared()
        let key = try ServiceAccountKey(contentsOfFile: google.serviceAccountKeyPath)
        let json = try await keyFile()
        #expect(key.clientEmail == google.serviceAccountEmail)
        #expect(key.privateKeyID == json.jsonString("private_key_id"))
        #expect(key.tokenURI == google.tokenEndpoint)
        #expect(key.projectID == "sandbox-project")
        #expect(key.clientID == json.jsonString("client_id"))
        #expect(key.universeDomain == "googleapis.com")
        #expect(
            key.identity
                == GoogleCredentialIdentity(
                    kind: .serviceAccount,
                    principal: google.serviceAccountEmail,
                    source: google.serviceAccountKeyPath,
                    projectID: "sandbox-project"
                )
        )
        #expect(
            key.description
                == "ServiceAccountKey(\(google.serviceAccountEmail), key \(key.privateKeyID!), token_uri \(google.tokenEndpoint.absoluteString))"
        )
    }

    @Test(
        "a key without private_key_id works as with google-auth: the grant and self-signed JWTs go through, their headers carry no kid, google-auth verifies them (before: 'has no private_key_id')"
    )
    func keyWithoutID() async throws {
        let google = try await GoogleSandbox.shared()
        let full = try await google.newServiceAccountKey()
        let email = full.jsonString("client_email")
        let certificate = try ScratchDirectory()
        let certificatePath = try certificate.write(
            Data(try await google.certificate(of: email, keyID: full.jsonString("private_key_id")).utf8),
            to: "cert.pem"
        )
        let withoutID = try certificate.write(try full.editingJSON(["private_key_id": nil]), to: "no-id.json")
        let key = try ServiceAccountKey(contentsOfFile: withoutID)
        #expect(key.privateKeyID == nil)
        #expect(key.description.contains("key without an id"))

        let recorder = RecordingTransport()
        let source = try ServiceAccountTokenSource(
            key: key,
            scopes: [ServiceConfiguration.googleTestScope],
            transport: recorder
        )
        let granted = try await source.fetchToken()
        let assertion = try #require(recorder.lastForm?.last?.1)
        #expect(jwtPart(assertion, 0) as NSDictionary == ["alg": "RS256", "typ": "JWT"] as NSDictionary)
        #expect(try await google.whoAmI(token: granted.accessToken).user == email)

        let jwt = try await ServiceAccountJWTAccessSource(key: key, audience: .forAuthority(google.authority))
            .fetchToken().accessToken
        #expect(jwtPart(jwt, 0) as NSDictionary == ["alg": "RS256", "typ": "JWT"] as NSDictionary)
        #expect(try await google.whoAmI(token: jwt).user == email)
        let verified = try await GoogleAuthReference.verifyJWT(
            jwt,
            certificatePath: certificatePath,
            audience: "https://localhost/"
        )
        #expect((verified["claims"] as? [String: Any])?["iss"] as? String == email)

        // google-auth, given the same file, makes the same header and the same claims.
        let reference = try await GoogleAuthReference.selfSignedJWT(keyPath: withoutID, audience: "https://localhost/")
        #expect(reference["header"] as? NSDictionary == jwtPart(jwt, 0) as NSDictionary)
        let referenceClaims = try #require(reference["claims"] as? [String: Any])
        #expect(Set(referenceClaims.keys) == Set(jwtPart(jwt, 1).keys))
        for claim in ["iss", "sub", "aud"] {
            #expect(referenceClaims[claim] as? String == jwtPart(jwt, 1)[claim] as? String, "\(claim)")
        }
    }

    @Test("a PKCS#1 (BEGIN RSA PRIVATE KEY) private_key is accepted too")
    func pkcs1() throws {
        let key = try ServiceAccountKey(
            json: Data(
                #"""
                {"type": "service_account", "client_email": "a@p.iam.gserviceaccount.com", "private_key_id": "k1",
                 "token_uri": "https://oauth2.googleapis.com/token", "private_key": "\#(RFC7515Key.pkcs1.replacingOccurrences(of: "\n", with: "\\n"))"}
                """#.utf8
            )
        )
        #expect(key.clientEmail == "a@p.iam.gserviceaccount.com")
        #expect(key.projectID == nil)
    }

    @Test("each missing or malformed field is named, and no error quotes the private key")
    func badFields() async throws {
        let good = try await keyFile()
        let privateKey = good.jsonString("private_key")
        let cases: [(changes: [String: (any Sendable)?], says: String)] = [
            (["type": "authorized_user"], "has type authorized_user, not service_account"),
            (["type": nil], "has no type"),
            (["client_email": nil], "has no client_email"),
            (["client_email": "no-at-sign"], "client_email in the service account key is not an email address"),
            (["client_email": 42], "client_email in the service account key is not a string"),
            (["private_key_id": "has space"], "private_key_id in the service account key is not a plain token"),
            (["private_key": nil], "has no private_key"),
            (
                ["private_key": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"],
                "private_key in the service account key is not usable"
            ),
            (["private_key": String(privateKey.dropLast(120))], "private_key in the service account key is not usable"),
            (["private_key": RefusedKeys.ecP256], "is EC, not RSA"),
            (
                ["private_key": RefusedKeys.rsa1024],
                "the RSA key has 1024 bits; RS256 needs at least 2048 (RFC 7518 section 3.3: smaller keys can be factored)"
            ),
            (
                ["private_key": "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIF\n-----END ENCRYPTED PRIVATE KEY-----\n"],
                "is encrypted"
            ),
            (["token_uri": nil], "has no token_uri"),
            (
                ["token_uri": "http://oauth2.example.com/token"],
                "must be https (http only to a loopback address), not http://oauth2.example.com"
            ),
            (["token_uri": "/token"], "token_uri in the service account key is not an absolute URL"),
        ]
        for (changes, says) in cases {
            let error = try #require(throws: OAuthError.self) {
                try ServiceAccountKey(json: try good.editingJSON(changes))
            }
            #expect(error.kind == .invalidConfiguration)
            #expect(error.message.contains(says), "\(changes.keys.sorted()): \(error.message)")
            for line in privateKey.split(separator: "\n") where !line.hasPrefix("-----") {
                #expect(!error.message.contains(line))
            }
        }
    }

    @Test(
        "a type holding key material (a shifted or corrupt file) is shown by its length in every reader's error, never quoted"
    )
    func typeHoldingKeyMaterial() async throws {
        let good = try await keyFile()
        let privateKey = good.jsonString("private_key")
        let type = "service_ac" + privateKey  // the shape the service-account-key fuzz target found
        let shifted = try good.editingJSON(["type": type])
        let machine = try ApplicationDefaultCredentialsTests.Machine()
        let path = try machine.scratch.write(shifted, to: "shifted.json")
        let errors = [
            try #require(throws: OAuthError.self) { try ServiceAccountKey(json: shifted) },
            try #require(throws: OAuthError.self) { try AuthorizedUserCredentials(json: shifted) },
            try #require(throws: OAuthError.self) {
                try ApplicationDefaultCredentials.resolve(
                    in: machine.environment(["GOOGLE_APPLICATION_CREDENTIALS": path])
                )
            },
        ]
        let firstKeyLine = try #require(privateKey.split(separator: "\n").first { !$0.hasPrefix("-----") })
        for error in errors {
            #expect(error.message.contains("<\(type.count) characters that are not a type name>"), "\(error.message)")
            #expect(
                !error.message.contains("PRIVATE KEY") && !error.message.contains(firstKeyLine.prefix(12)),
                "\(error.message)"
            )
        }
    }

    @Test("files: missing, a directory, not JSON, too large are clear errors naming the path")
    func badFiles() throws {
        let scratch = try ScratchDirectory()
        let notJSON = try scratch.write(Data("not json".utf8), to: "not.json")
        let huge = try scratch.write(Data(repeating: UInt8(ascii: " "), count: 70_000), to: "huge.json")
        let cases: [(path: String, says: String)] = [
            (scratch.url.appendingPathComponent("missing.json").path, "no such file"),
            (scratch.path, "it is a directory, not a regular file"),
            (notJSON, "is not a JSON object"),
            (huge, "it is larger than 65536 bytes"),
        ]
        for (path, says) in cases {
            let error = try #require(throws: OAuthError.self) { try ServiceAccountKey(contentsOfFile: path) }
            #expect(error.message.contains(path), "\(error.message)")
            #expect(error.message.contains(says), "\(error.message)")
        }
    }
}
