import Foundation
import GoogleAuth
import OAuth2
import OAuth2TestSupport
import TestSupport
import Testing

@Suite("Application Default Credentials: the search order, its errors, and no probing")
struct ApplicationDefaultCredentialsTests {
    /// A home, a gcloud config directory and a product-name file of the test's own.
    struct Machine {
        let scratch: ScratchDirectory
        var home: String { scratch.url.appendingPathComponent("home").path }
        var gcloudConfig: String { scratch.url.appendingPathComponent("gcloud-config").path }
        var productName: String { scratch.url.appendingPathComponent("product_name").path }

        init() throws {
            scratch = try ScratchDirectory()
            try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        }

        func environment(_ variables: [String: String]) -> ApplicationDefaultCredentials.Environment {
            ApplicationDefaultCredentials.Environment(
                variables: ["HOME": home].merging(variables) { $1 },
                productNamePath: productName
            )
        }
    }

    @Test("GOOGLE_APPLICATION_CREDENTIALS comes first, over gcloud's file and the metadata server")
    func environmentVariableFirst() async throws {
        let google = try await GoogleSandbox.shared()
        let machine = try Machine()
        try machine.scratch.write(
            Data(contentsOf: URL(fileURLWithPath: google.authorizedUserPath)),
            to: "home/.config/gcloud/application_default_credentials.json"
        )
        let resolved = try ApplicationDefaultCredentials.resolve(
            in: machine.environment([
                "GOOGLE_APPLICATION_CREDENTIALS": google.serviceAccountKeyPath,
                "GCE_METADATA_HOST": google.metadataHost,
            ])
        )
        #expect(resolved.origin == .environmentVariable(path: google.serviceAccountKeyPath))
        #expect(resolved.identity.kind == .serviceAccount)
        #expect(resolved.identity.principal == google.serviceAccountEmail)
        // The credential holds the key it was read from, and nothing of the other kinds.
        #expect(resolved.credential.serviceAccountKey?.clientEmail == google.serviceAccountEmail)
        #expect(resolved.credential.serviceAccountKey?.source == google.serviceAccountKeyPath)
        #expect(resolved.credential.authorizedUserCredentials == nil)
        #expect(resolved.credential.metadataHost == nil)
    }

    @Test("GOOGLE_APPLICATION_CREDENTIALS naming a missing or unusable file is an error, not a fall-through")
    func environmentVariableErrors() async throws {
        let google = try await GoogleSandbox.shared()
        let machine = try Machine()
        try machine.scratch.write(
            Data(contentsOf: URL(fileURLWithPath: google.authorizedUserPath)),
            to: "home/.config/gcloud/application_default_credentials.json"
        )
        let missing = machine.scratch.url.appendingPathComponent("nope.json").path
        let unsupported = try machine.scratch.write(
            Data(#"{"type": "gdch_service_account"}"#.utf8),
            to: "gdch.json"
        )
        let impersonatedWithoutURL = try machine.scratch.write(
            Data(#"{"type": "impersonated_service_account"}"#.utf8),
            to: "impersonated.json"
        )
        let externalWithoutAudience = try machine.scratch.write(
            Data(#"{"type": "external_account", "credential_source": {"file": "/nonexistent"}}"#.utf8),
            to: "external.json"
        )
        let cases = [
            (missing, "GOOGLE_APPLICATION_CREDENTIALS names \(missing), which does not exist"),
            (
                unsupported,
                "holds a \"gdch_service_account\" credential; supported: service_account, authorized_user, impersonated_service_account, external_account, external_account_authorized_user"
            ),
            (impersonatedWithoutURL, "has no service_account_impersonation_url"),
            (externalWithoutAudience, "has no audience"),
            (
                machine.scratch.path,
                "GOOGLE_APPLICATION_CREDENTIALS: cannot read \(machine.scratch.path): it is a directory, not a regular file"
            ),
        ]
        for (path, says) in cases {
            let error = try #require(throws: OAuthError.self) {
                try ApplicationDefaultCredentials.resolve(
                    in: machine.environment(["GOOGLE_APPLICATION_CREDENTIALS": path])
                )
            }
            #expect(error.kind == .invalidConfiguration)
            #expect(error.message.contains(says), "\(error.message)")
        }
        // Set but empty counts as unset: gcloud's file is used.
        let resolved = try ApplicationDefaultCredentials.resolve(
            in: machine.environment(["GOOGLE_APPLICATION_CREDENTIALS": ""])
        )
        #expect(resolved.identity.kind == .authorizedUser)
        #expect(resolved.credential.authorizedUserCredentials?.clientID == resolved.identity.principal)
        #expect(resolved.credential.serviceAccountKey == nil)
        #expect(resolved.credential.metadataHost == nil)
    }

    @Test("gcloud's well-known file: $CLOUDSDK_CONFIG when set, else ~/.config/gcloud")
    func wellKnownFile() async throws {
        let google = try await GoogleSandbox.shared()
        let machine = try Machine()
        let user = try Data(contentsOf: URL(fileURLWithPath: google.authorizedUserPath))
        let inHome = try machine.scratch.write(user, to: "home/.config/gcloud/application_default_credentials.json")
        var resolved = try ApplicationDefaultCredentials.resolve(in: machine.environment([:]))
        #expect(resolved.origin == .wellKnownFile(path: inHome))
        #expect(resolved.identity.quotaProjectID == google.quotaProjectID)

        let inConfig = try machine.scratch.write(
            Data(contentsOf: URL(fileURLWithPath: google.serviceAccountKeyPath)),
            to: "gcloud-config/application_default_credentials.json"
        )
        resolved = try ApplicationDefaultCredentials.resolve(
            in: machine.environment(["CLOUDSDK_CONFIG": machine.gcloudConfig])
        )
        #expect(resolved.origin == .wellKnownFile(path: inConfig))
        #expect(resolved.identity.kind == .serviceAccount)
    }

    @Test("the metadata server: at GCE_METADATA_HOST when set, at metadata.google.internal on a Google VM")
    func metadataServer() async throws {
        let machine = try Machine()
        var resolved = try ApplicationDefaultCredentials.resolve(
            in: machine.environment(["GCE_METADATA_HOST": "127.0.0.1:8089"])
        )
        #expect(resolved.origin == .metadataServer(reason: "GCE_METADATA_HOST is set"))
        guard let host = resolved.credential.metadataHost else {
            Issue.record("\(resolved)")
            return
        }
        #expect(host == "127.0.0.1:8089")
        #expect(resolved.identity.kind == .computeEngine)
        #expect(resolved.credential.serviceAccountKey == nil && resolved.credential.authorizedUserCredentials == nil)

        try machine.scratch.write(Data("Google Compute Engine\n".utf8), to: "product_name")
        resolved = try ApplicationDefaultCredentials.resolve(in: machine.environment([:]))
        guard let vmHost = resolved.credential.metadataHost else {
            Issue.record("\(resolved)")
            return
        }
        #expect(vmHost == "metadata.google.internal")
        #expect(resolved.origin == .metadataServer(reason: "\(machine.productName) says \"Google Compute Engine\""))

        let bad = try #require(throws: OAuthError.self) {
            try ApplicationDefaultCredentials.resolve(
                in: machine.environment(["GCE_METADATA_HOST": "http://169.254.169.254/"])
            )
        }
        #expect(bad.message.contains("not HOST or HOST:PORT"))
    }

    @Test("nothing found: the error lists each place tried and why it did not apply")
    func nothingFound() throws {
        let machine = try Machine()
        try machine.scratch.write(Data("Standard PC (Q35 + ICH9, 2009)\n".utf8), to: "product_name")
        let error = try #require(throws: OAuthError.self) {
            try ApplicationDefaultCredentials.resolve(
                in: machine.environment(["CLOUDSDK_CONFIG": machine.gcloudConfig])
            )
        }
        #expect(error.kind == .invalidConfiguration)
        let report = try #require(error.underlying as? ApplicationDefaultCredentials.SearchReport)
        #expect(
            report.attempts.map(\.place) == [
                "GOOGLE_APPLICATION_CREDENTIALS",
                "gcloud's well-known file \(machine.gcloudConfig)/application_default_credentials.json",
                "the Compute Engine metadata server",
            ]
        )
        #expect(report.attempts.map(\.outcome)[0] == "not set")
        #expect(report.attempts.map(\.outcome)[1] == "no such file")
        #expect(
            report.attempts.map(\.outcome)[2]
                == "GCE_METADATA_HOST is not set and this is not a Google VM (\(machine.productName) says \"Standard PC (Q35 + ICH9, 2009)\"); the link-local address is never probed"
        )
        for attempt in report.attempts {
            #expect(error.message.contains(attempt.place) && error.message.contains(attempt.outcome))
        }

        let withoutHome = try #require(throws: OAuthError.self) {
            try ApplicationDefaultCredentials.resolve(
                in: .init(variables: [:], productNamePath: machine.productName + ".missing")
            )
        }
        let attempts = try #require(withoutHome.underlying as? ApplicationDefaultCredentials.SearchReport).attempts
        #expect(
            attempts[1] == .init(place: "gcloud's well-known file", outcome: "neither CLOUDSDK_CONFIG nor HOME is set")
        )
        #expect(attempts[2].outcome.contains("\(machine.productName).missing cannot be read"))
    }

    @Test(
        "no env and no Google-VM marker: the whole chain makes no network request at all; with GCE_METADATA_HOST it makes exactly one"
    )
    func noProbe() async throws {
        let google = try await GoogleSandbox.shared()
        let machine = try Machine()
        let transport = RecordingTransport()

        // The chain a program runs: resolve, make a source, fetch.
        func chain(_ environment: ApplicationDefaultCredentials.Environment) async throws -> FetchedAccessToken {
            let resolved = try ApplicationDefaultCredentials.resolve(in: environment)
            return try await resolved.tokenSource(scopes: [], transport: transport).fetchToken()
        }

        let error = await #expect(throws: OAuthError.self) { try await chain(machine.environment([:])) }
        #expect(error?.kind == .invalidConfiguration)
        #expect(transport.sent.isEmpty, "no request of any kind: \(transport.sent)")

        // The recorder does see requests: the same chain pointed at the emulator sends one.
        let token = try await chain(machine.environment(["GCE_METADATA_HOST": google.metadataHost]))
        #expect(
            transport.sent.map(\.absoluteString) == [
                "http://\(google.metadataHost)/computeMetadata/v1/instance/service-accounts/default/token"
            ]
        )
        #expect(try await google.whoAmI(token: token.accessToken).user == google.metadataEmail)
    }

    @Test("every resolved credential gives a source whose token calls the service as its principal")
    func resolvedSourcesWork() async throws {
        let google = try await GoogleSandbox.shared()
        let machine = try Machine()
        let user = try machine.scratch.write(
            Data(contentsOf: URL(fileURLWithPath: google.authorizedUserPath)),
            to: "user.json"
        )
        let cases: [([String: String], String)] = [
            (["GOOGLE_APPLICATION_CREDENTIALS": google.serviceAccountKeyPath], google.serviceAccountEmail),
            (["GOOGLE_APPLICATION_CREDENTIALS": user], google.sandbox.user),
            (["GCE_METADATA_HOST": google.metadataHost], google.metadataEmail),
        ]
        for (variables, caller) in cases {
            let resolved = try ApplicationDefaultCredentials.resolve(in: machine.environment(variables))
            let source = try resolved.tokenSource(
                scopes: [ServiceConfiguration.googleTestScope],
                userTokenEndpoint: google.tokenEndpoint
            )
            let token = try await source.fetchToken()
            #expect(try await google.whoAmI(token: token.accessToken).user == caller, "\(resolved)")
        }
    }
}
