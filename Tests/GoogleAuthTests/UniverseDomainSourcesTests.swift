import AuthRPC
import AuthSampleService
import Foundation
import GoogleAuth
import OAuth2
import OAuth2TestSupport
import TestSupport
import Testing

/// Where the universe comes from: `GOOGLE_CLOUD_UNIVERSE_DOMAIN`, a credential file's
/// `universe_domain`, the metadata server's `universe/universe-domain`; and where it leads: the
/// IAM Credentials and STS endpoints, self-signed JWTs. google-auth reads the same values in the
/// same environment.
@Suite("Universe domains where users set them: the environment, files, the metadata server")
struct UniverseDomainSourcesTests {
    static let universe = "example-universe.test"
    static let variable = "GOOGLE_CLOUD_UNIVERSE_DOMAIN"

    /// A key file of `universe` and an environment naming it, with nothing else to find.
    private func keyEnvironment(
        _ google: GoogleSandbox,
        _ scratch: ScratchDirectory,
        universe: String? = Self.universe
    ) async throws -> (path: String, variables: [String: String]) {
        let json = try await google.newServiceAccountKey().editingJSON(["universe_domain": universe])
        let path = try scratch.write(json, to: "universe-key.json")
        try FileManager.default.createDirectory(
            at: scratch.url.appendingPathComponent("home"),
            withIntermediateDirectories: true
        )
        return (
            path, ["HOME": scratch.url.appendingPathComponent("home").path, "GOOGLE_APPLICATION_CREDENTIALS": path]
        )
    }

    @Test(
        "GOOGLE_CLOUD_UNIVERSE_DOMAIN names the endpoints' universe for ADC: a key of that universe is used (self-signed, with the scope as a claim); unset, it is refused; an explicit argument wins (before: the variable was ignored and the key refused)"
    )
    func environmentVariable() async throws {
        let google = try await GoogleSandbox.shared()
        let scratch = try ScratchDirectory()
        let (path, variables) = try await keyEnvironment(google, scratch)
        let scopes = [ServiceConfiguration.googleTestScope]

        let withVariable = variables.merging([Self.variable: "Example-Universe.TEST"]) { $1 }
        let resolved = try ApplicationDefaultCredentials.resolve(in: .init(variables: withVariable))
        #expect(resolved.universeDomain == Self.universe)
        let credentials = try GoogleCredentials.applicationDefault(
            scopes: scopes,
            environment: .init(variables: withVariable)
        )
        #expect(credentials.universeDomain == Self.universe)
        // Outside googleapis.com there is no token endpoint to ask: the key signs its own JWT.
        let token = try await credentials.freshAccessToken(forAuthority: "pubsub.\(Self.universe):443")
        let claims = jwtPart(token, 1)
        #expect(claims["scope"] as? String == ServiceConfiguration.googleTestScope)
        #expect(claims["aud"] == nil)
        #expect(claims["iss"] as? String == claims["sub"] as? String)
        #expect(claims["iss"] as? String == (try ServiceAccountKey(contentsOfFile: path)).clientEmail)

        let unset = try #require(throws: OAuthError.self) {
            try GoogleCredentials.applicationDefault(scopes: scopes, environment: .init(variables: variables))
        }
        #expect(
            unset.message
                == "the credential from \(path) is for universe \(Self.universe) (universe_domain), but the endpoints are in universe googleapis.com: its tokens would be refused there"
        )
        let argumentWins = try #require(throws: OAuthError.self) {
            try GoogleCredentials.applicationDefault(
                scopes: scopes,
                environment: .init(variables: withVariable),
                universeDomain: "googleapis.com"
            )
        }
        #expect(argumentWins.message.contains("the endpoints are in universe googleapis.com"))
        #expect(
            try GoogleCredentials.applicationDefault(
                scopes: scopes,
                environment: .init(variables: variables),
                universeDomain: Self.universe
            ).universeDomain == Self.universe
        )

        // And a plain key where the variable names another universe is refused the other way.
        let (plainPath, plainVariables) = try await keyEnvironment(google, scratch, universe: nil)
        let plain = try #require(throws: OAuthError.self) {
            try GoogleCredentials.applicationDefault(
                scopes: scopes,
                environment: .init(variables: plainVariables.merging([Self.variable: Self.universe]) { $1 })
            )
        }
        #expect(plain.message.hasPrefix("the credential from \(plainPath) is for universe googleapis.com"))
    }

    @Test(
        "an empty GOOGLE_CLOUD_UNIVERSE_DOMAIN, a URL or a non-hostname is refused naming where it came from: the variable, the file's field, the argument (before: a URL in a key file was taken as the universe)"
    )
    func badValues() async throws {
        let google = try await GoogleSandbox.shared()
        let scratch = try ScratchDirectory()
        let (_, variables) = try await keyEnvironment(google, scratch, universe: nil)
        let cases: [(String, String)] = [
            ("", "GOOGLE_CLOUD_UNIVERSE_DOMAIN is empty; a universe domain is a domain name like googleapis.com"),
            (
                "https://example-universe.test",
                "GOOGLE_CLOUD_UNIVERSE_DOMAIN is \"https://example-universe.test\", a URL or path; a universe domain is the domain name alone, like googleapis.com"
            ),
            (
                "not a host!",
                "GOOGLE_CLOUD_UNIVERSE_DOMAIN is \"not a host!\", not a domain name (dot-separated labels of letters, digits and hyphens, like googleapis.com)"
            ),
            ("localhost", "GOOGLE_CLOUD_UNIVERSE_DOMAIN is \"localhost\", not a domain name"),
            ("-bad.example", "GOOGLE_CLOUD_UNIVERSE_DOMAIN is \"-bad.example\", not a domain name"),
        ]
        for (value, says) in cases {
            let error = try #require(throws: OAuthError.self, "\(value)") {
                try ApplicationDefaultCredentials.resolve(
                    in: .init(variables: variables.merging([Self.variable: value]) { $1 })
                )
            }
            #expect(error.kind == .invalidConfiguration, "\(value)")
            #expect(error.message.hasPrefix(says), "\(value): \(error.message)")
        }

        // An empty field in a file counts as absent, as google-auth reads it (`universe_domain or googleapis.com`).
        let emptyField = try await google.newServiceAccountKey().editingJSON(["universe_domain": ""])
        #expect(try ServiceAccountKey(json: emptyField).universeDomain == "googleapis.com")
        for (value, says) in [
            ("https://example-universe.test/", "is \"https://example-universe.test/\", a URL or path"),
            ("under_score.test", "is \"under_score.test\", not a domain name"),
        ] {
            let json = try await google.newServiceAccountKey().editingJSON(["universe_domain": value])
            let path = try scratch.write(json, to: "bad-universe.json")
            let key = try #require(throws: OAuthError.self, "\(value)") { try ServiceAccountKey(contentsOfFile: path) }
            #expect(key.message.hasPrefix("universe_domain in \(path) "), "\(key.message)")
            #expect(key.message.contains(says), "\(key.message)")
            let userJSON = try await google.newAuthorizedUser().editingJSON(["universe_domain": value])
            let user = try #require(throws: OAuthError.self, "\(value)") {
                try AuthorizedUserCredentials(json: userJSON, source: "user.json")
            }
            #expect(user.message.hasPrefix("universe_domain in user.json "), "\(user.message)")
        }

        let key = try ServiceAccountKey(json: try await google.newServiceAccountKey())
        let argument = try #require(throws: OAuthError.self) {
            try GoogleCredentials(selfSignedJWTsFor: key, universeDomain: "https://googleapis.com")
        }
        #expect(argument.message.hasPrefix("the universeDomain argument is \"https://googleapis.com\", a URL or path"))
    }

    @Test(
        "the metadata server's universe/universe-domain: 404 is googleapis.com; a universe it names is checked before the first token (a mismatch asks for none), and GOOGLE_CLOUD_UNIVERSE_DOMAIN makes it usable; bad answers are refused naming the server (before: the metadata server was always googleapis.com)"
    )
    func metadataServer() async throws {
        // A sandbox of its own: the knob changes the emulator for every caller.
        let own = GoogleSandbox(sandbox: try await Peers.launchSandbox(name: "google-metadata-universe"))
        defer { own.sandbox.process.stop() }
        let retry = MetadataRetry(attempts: 2, initialBackoff: .milliseconds(20))
        let source = try ComputeEngineTokenSource(host: own.metadataHost, retry: retry)
        func counter(_ name: String) async throws -> Int { try await own.metadataCounters()[name] ?? 0 }

        #expect(try await source.universeDomain() == "googleapis.com")
        let plain = try GoogleCredentials(source: source)
        #expect(try await own.call(plain).message.username == own.metadataEmail)
        #expect(try await counter("universe_requests") == 2, "asked once by the credentials")

        try await own.metadataKnob("universe-domain", ["domain": Self.universe])
        #expect(try await source.universeDomain() == Self.universe)
        let tokensBefore = try await counter("token_requests")
        let mismatched = try GoogleCredentials(source: source, refreshBackoff: .none)
        let refused = try await #require(throws: OAuthError.self) { try await mismatched.freshAccessToken() }
        #expect(refused.kind == .invalidConfiguration)
        #expect(
            refused.message
                == "the credential from metadata server at \(own.metadataHost) is for universe \(Self.universe) (the metadata server's universe/universe-domain), but the endpoints are in universe googleapis.com: its tokens would be refused there"
        )
        #expect(try await counter("token_requests") == tokensBefore, "no token is asked for")

        let variables = [
            "HOME": "/nonexistent", "GCE_METADATA_HOST": own.metadataHost, Self.variable: Self.universe,
        ]
        let adc = try GoogleCredentials.applicationDefault(
            scopes: [ServiceConfiguration.googleTestScope],
            environment: .init(variables: variables)
        )
        #expect(adc.universeDomain == Self.universe)
        #expect(try await own.call(adc).message.username == own.metadataEmail)
        #expect(try await counter("token_requests") == tokensBefore + 1)

        for (answer, says) in [
            ("https://\(Self.universe)/", "is \"https://\(Self.universe)/\", a URL or path"),
            ("", "is empty"),
            ("two words.test", "is \"two words.test\", not a domain name"),
        ] {
            try await own.metadataKnob("universe-domain", ["domain": answer])
            let error = try await #require(throws: OAuthError.self, "\(answer)") { try await source.universeDomain() }
            #expect(error.kind == .invalidConfiguration)
            #expect(
                error.message.hasPrefix(
                    "the universe domain the metadata server at \(own.metadataHost) answered \(says)"
                ),
                "\(error.message)"
            )
        }
        try await own.metadataKnob("universe-domain", [:])
        #expect(try await source.universeDomain() == "googleapis.com")
    }

    @Test(
        "impersonation and STS follow the universe: iamcredentials.UNIVERSE for a source of that universe (the URL google-auth POSTs to as well), sts.UNIVERSE for a file without token_url (before: iamcredentials.googleapis.com whatever the source)"
    )
    func endpointsFollowTheUniverse() async throws {
        let google = try await GoogleSandbox.shared()
        let scratch = try ScratchDirectory()
        let (path, variables) = try await keyEnvironment(google, scratch)
        let key = try ServiceAccountKey(contentsOfFile: path)
        let source = try GoogleCredentials(
            selfSignedJWTsFor: key,
            scopes: [ImpersonatedServiceAccountCredentials.sourceScope],
            universeDomain: Self.universe
        )
        let target = google.impersonationTarget
        let impersonated = try ImpersonatedTokenSource(
            source: source,
            targetPrincipal: target,
            scopes: [ImpersonatedServiceAccountCredentials.sourceScope]
        )
        let expected =
            "https://iamcredentials.\(Self.universe)/v1/projects/-/serviceAccounts/\(target):generateAccessToken"
        #expect(impersonated.endpoint.absoluteString == expected)
        #expect(impersonated.identity.universeDomain == Self.universe)
        let idTokens = try ImpersonatedIDTokenSource(
            source: source,
            targetPrincipal: target,
            audience: "https://run.example"
        )
        #expect(
            idTokens.endpoint.absoluteString
                == "https://iamcredentials.\(Self.universe)/v1/projects/-/serviceAccounts/\(target):generateIdToken"
        )
        let reference = try await GoogleAuthReference.universe(environment: variables, impersonate: target)
        #expect(reference["universe_domain"] as? String == Self.universe)
        #expect(reference["impersonation_url"] as? String == expected, "google-auth says \(reference)")

        // A source in googleapis.com keeps Google's public endpoint.
        let plainKey = try ServiceAccountKey(json: try await google.newServiceAccountKey())
        let plainSource = try GoogleCredentials(selfSignedJWTsFor: plainKey, scopes: ["s"])
        #expect(
            try ImpersonatedTokenSource(source: plainSource, targetPrincipal: target, scopes: ["s"]).endpoint.host
                == "iamcredentials.googleapis.com"
        )

        let federation = try ExternalAccountCredentials(
            json: Data(
                """
                {"type": "external_account", "audience": "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/q",
                 "subject_token_type": "urn:ietf:params:oauth:token-type:jwt", "universe_domain": "Example-Universe.test",
                 "credential_source": {"file": "/var/run/token"}}
                """.utf8
            )
        )
        #expect(federation.tokenURL.absoluteString == "https://sts.\(Self.universe)/v1/token")
        #expect(federation.universeDomain == Self.universe)
    }

    @Test(
        "cross-check with google-auth: the same universe in the same environment (a key file's, the metadata server's 404 and its answer)"
    )
    func sameAsGoogleAuth() async throws {
        let own = GoogleSandbox(sandbox: try await Peers.launchSandbox(name: "google-universe-cross-check"))
        defer { own.sandbox.process.stop() }
        let scratch = try ScratchDirectory()
        let (_, keyVariables) = try await keyEnvironment(own, scratch)
        let metadata = [
            "HOME": "/nonexistent", "GCE_METADATA_HOST": own.metadataHost, "GCE_METADATA_IP": own.metadataHost,
        ]
        for (name, variables, knob) in [
            ("key file", keyVariables, nil), ("metadata server, 404", metadata, nil),
            ("metadata server, a universe", metadata, Self.universe),
        ] as [(String, [String: String], String?)] {
            try await own.metadataKnob("universe-domain", knob.map { ["domain": $0] } ?? [:])
            let reference = try await GoogleAuthReference.universe(environment: variables)
            let resolved = try ApplicationDefaultCredentials.resolve(in: .init(variables: variables))
            let ours =
                if let host = resolved.credential.metadataHost {
                    try await ComputeEngineTokenSource(host: host).universeDomain()
                } else {
                    resolved.identity.universeDomain
                }
            #expect(ours == reference["universe_domain"] as? String, "\(name): google-auth says \(reference)")
            #expect(ours == (knob ?? (name == "key file" ? Self.universe : "googleapis.com")), "\(name)")
        }
    }
}
