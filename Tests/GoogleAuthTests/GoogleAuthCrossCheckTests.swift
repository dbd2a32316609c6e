import AuthRPC
import AuthSampleService
import Foundation
import GoogleAuth
import OAuth2
import TestSupport
import Testing

/// Our resolution and google-auth's `google.auth.default()`, in the same environment, must pick
/// the same credential (type and principal).
@Suite("Cross-check with google-auth: the same ADC choice in the same environment")
struct GoogleAuthCrossCheckTests {
    @Test("env var, gcloud's file (CLOUDSDK_CONFIG and HOME), GCE_METADATA_HOST, and nothing: both pick the same")
    func sameChoice() async throws {
        let google = try await GoogleSandbox.shared()
        let scratch = try ScratchDirectory()
        let emptyHome = scratch.url.appendingPathComponent("empty-home").path
        let homeWithFile = scratch.url.appendingPathComponent("home").path
        let config = scratch.url.appendingPathComponent("config").path
        try FileManager.default.createDirectory(atPath: emptyHome, withIntermediateDirectories: true)
        let userJSON = try Data(contentsOf: URL(fileURLWithPath: google.authorizedUserPath))
        try scratch.write(userJSON, to: "home/.config/gcloud/application_default_credentials.json")
        try scratch.write(
            Data(contentsOf: URL(fileURLWithPath: google.serviceAccountKeyPath)),
            to: "config/application_default_credentials.json"
        )
        // google-auth decides "on Compute Engine" by pinging GCE_METADATA_IP; point it at the same emulator.
        let metadata = ["GCE_METADATA_HOST": google.metadataHost, "GCE_METADATA_IP": google.metadataHost]

        let environments: [(String, [String: String])] = [
            (
                "env var over everything",
                ["HOME": homeWithFile, "GOOGLE_APPLICATION_CREDENTIALS": google.serviceAccountKeyPath].merging(metadata)
                { $1 }
            ),
            ("CLOUDSDK_CONFIG", ["HOME": homeWithFile, "CLOUDSDK_CONFIG": config].merging(metadata) { $1 }),
            ("~/.config/gcloud", ["HOME": homeWithFile].merging(metadata) { $1 }),
            ("metadata server", ["HOME": emptyHome].merging(metadata) { $1 }),
            ("nothing", ["HOME": emptyHome]),
        ]
        for (name, variables) in environments {
            let reference = try await GoogleAuthReference.resolveADC(environment: variables)
            let ours = try await choice(in: variables)
            #expect(ours.type == reference["type"] as? String, "\(name): google-auth says \(reference)")
            #expect(ours.principal == reference["principal"] as? String, "\(name): google-auth says \(reference)")
            #expect(ours.quotaProjectID == reference["quota_project_id"] as? String, "\(name)")
        }
    }

    @Test(
        "the ADC token provider picks what google-auth picks (quota project from GOOGLE_CLOUD_QUOTA_PROJECT too), and the server sees that principal"
    )
    func providerPicksTheSame() async throws {
        let google = try await GoogleSandbox.shared()
        let scratch = try ScratchDirectory()
        let home = scratch.url.appendingPathComponent("home").path
        let emptyHome = scratch.url.appendingPathComponent("empty-home").path
        try FileManager.default.createDirectory(atPath: emptyHome, withIntermediateDirectories: true)
        try scratch.write(
            Data(contentsOf: URL(fileURLWithPath: google.authorizedUserPath)),
            to: "home/.config/gcloud/application_default_credentials.json"
        )
        let metadata = ["GCE_METADATA_HOST": google.metadataHost, "GCE_METADATA_IP": google.metadataHost]
        let environments: [(String, [String: String])] = [
            (
                "service account key",
                ["HOME": home, "GOOGLE_APPLICATION_CREDENTIALS": google.serviceAccountKeyPath].merging(metadata) { $1 }
            ),
            (
                "service account key, quota project from the environment",
                [
                    "HOME": home, "GOOGLE_APPLICATION_CREDENTIALS": google.serviceAccountKeyPath,
                    "GOOGLE_CLOUD_QUOTA_PROJECT": "env-quota",
                ]
            ),
            ("gcloud's file", ["HOME": home].merging(metadata) { $1 }),
            (
                "gcloud's file, the environment's quota project over the file's",
                ["HOME": home, "GOOGLE_CLOUD_QUOTA_PROJECT": "env-quota"]
            ),
            ("metadata server", ["HOME": emptyHome].merging(metadata) { $1 }),
            (
                "metadata server, quota project from the environment",
                ["HOME": emptyHome, "GOOGLE_CLOUD_QUOTA_PROJECT": "env-quota"].merging(metadata) { $1 }
            ),
        ]
        for (name, variables) in environments {
            let reference = try await GoogleAuthReference.resolveADC(environment: variables)
            let credentials = try GoogleCredentials.applicationDefault(
                scopes: [ServiceConfiguration.googleTestScope],
                environment: ApplicationDefaultCredentials.Environment(variables: variables),
                userTokenEndpoint: google.tokenEndpoint
            )
            #expect(
                credentials.identity.kind.rawValue == reference["type"] as? String,
                "\(name): google-auth says \(reference)"
            )
            #expect(
                credentials.identity.quotaProjectID == reference["quota_project_id"] as? String,
                "\(name): google-auth says \(reference)"
            )
            let response = try await google.call(credentials)
            #expect(
                response.trailers.strings(forKey: "x-sandbox-user-project")
                    == (reference["quota_project_id"] as? String).map { [$0] } ?? [],
                "\(name)"
            )
            if credentials.identity.kind == .authorizedUser {
                // google-auth names the OAuth client; the server names the user it stands for.
                #expect(credentials.identity.principal == reference["principal"] as? String, "\(name)")
                #expect(response.message.username == google.sandbox.user, "\(name)")
            } else {
                #expect(
                    response.message.username == reference["principal"] as? String,
                    "\(name): google-auth says \(reference)"
                )
            }
        }
    }

    /// Our choice, as google_auth_check.py reports its own: type, principal (asking the metadata
    /// server for its email, as google-auth does), quota project.
    func choice(
        in variables: [String: String]
    ) async throws -> (type: String?, principal: String?, quotaProjectID: String?) {
        let environment = ApplicationDefaultCredentials.Environment(variables: variables)
        let resolved: ApplicationDefaultCredentials.Resolved
        do {
            resolved = try ApplicationDefaultCredentials.resolve(in: environment)
        } catch {
            #expect(error.underlying is ApplicationDefaultCredentials.SearchReport, "\(error)")
            return (nil, nil, nil)
        }
        let identity = resolved.identity
        if let host = resolved.credential.metadataHost {
            let email = try await ComputeEngineTokenSource(host: host).serviceAccountEmail()
            return (identity.kind.rawValue, email, identity.quotaProjectID)
        }
        return (identity.kind.rawValue, identity.principal, identity.quotaProjectID)
    }
}
