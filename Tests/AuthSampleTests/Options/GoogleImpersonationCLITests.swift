import Foundation
import TestSupport
import Testing

/// `auth_sample call --impersonate-service-account` and `--id-token-audience`, and `status`'s
/// chain, with the real binary against the sandbox's IAM Credentials emulator, metadata server
/// and grpcio service (which verifies ID tokens with google-auth).
@Suite("auth_sample: impersonation and ID tokens", .timeLimit(.minutes(3)))
struct GoogleImpersonationCLITests {
    typealias Google = GoogleCredentialsCLITests.Google

    private func value(_ google: Google, _ name: String) -> String { google.sandbox.process.string(name) }

    @Test("call --service-account-key --impersonate-service-account DELEGATE,TARGET: the server sees the target")
    func impersonateOverAKey() async throws {
        let google = try await Google.make()
        let target = value(google, "impersonation_target")
        let chain = "\(value(google, "impersonation_delegate")),\(target)"
        let result = try await google.run(
            [
                "call", "--json", "--service-account-key", google.keyPath, "--impersonate-service-account", chain,
                "--iam-endpoint", value(google, "iam_endpoint"),
            ] + google.workspace.tls
        )
        #expect(result.status == 0, "\(result)")
        let object = try #require(result.jsonObject, "\(result)")
        #expect(object["username"] as? String == target)
        #expect((object["credentials"] as? String)?.contains("generateAccessToken at") == true, "\(result)")
    }

    @Test(
        "call --impersonate-service-account over the stored session (gcloud's flag over a login): the server sees the target"
    )
    func impersonateWithTheSession() async throws {
        let google = try await Google.make()
        try await google.workspace.login()
        let target = value(google, "impersonation_target")
        let arguments = ["--impersonate-service-account", target, "--iam-endpoint", value(google, "iam_endpoint")]
        let result = try await google.run(["call", "--json"] + arguments + google.workspace.tls)
        #expect(result.status == 0, "\(result)")
        #expect(result.jsonObject?["username"] as? String == target, "\(result)")
        let status = try await google.run(["status", "--json"] + arguments)
        #expect(status.status == 0, "\(status)")
        #expect((status.jsonObject?["chain"] as? [String])?.last == target, "\(status)")
        let mixed = try await google.run(["call", "--token", "abc"] + arguments + google.workspace.tls)
        #expect(mixed.status != 0)
    }

    @Test("call --adc with gcloud's impersonated_service_account file; status shows type, principal and chain")
    func adcImpersonatedFile() async throws {
        let google = try await Google.make()
        let environment = ["GOOGLE_APPLICATION_CREDENTIALS": value(google, "impersonated_adc_file")]
        let call = try await google.run(
            ["call", "--json", "--adc", "--user-token-endpoint", google.tokenEndpoint] + google.workspace.tls,
            environment: environment
        )
        #expect(call.status == 0, "\(call)")
        #expect(call.jsonObject?["username"] as? String == value(google, "impersonation_target"), "\(call)")

        let status = try await google.run(
            ["status", "--json", "--adc", "--user-token-endpoint", google.tokenEndpoint],
            environment: environment
        )
        #expect(status.status == 0, "\(status)")
        let object = try #require(status.jsonObject, "\(status)")
        #expect(object["credential_type"] as? String == "impersonated_service_account")
        #expect(object["principal"] as? String == value(google, "impersonation_target"))
        #expect(object["chain"] as? [String] == [google.userClientID, value(google, "impersonation_target")])
        let text = try await google.run(
            ["status", "--adc", "--user-token-endpoint", google.tokenEndpoint],
            environment: environment
        )
        #expect(
            text.stdout.contains("Chain:         \(google.userClientID) -> \(value(google, "impersonation_target"))")
        )
    }

    @Test("call --id-token-audience from a key, from the metadata server, and through impersonation")
    func idTokens() async throws {
        let google = try await Google.make()
        let audience = value(google, "id_token_audience")
        let key = try await google.run(
            ["call", "--json", "--service-account-key", google.keyPath, "--id-token-audience", audience]
                + google.workspace.tls
        )
        #expect(key.status == 0, "\(key)")
        #expect(key.jsonObject?["username"] as? String == google.email, "\(key)")

        let metadata = try await google.run(
            ["call", "--json", "--adc", "--id-token-audience", audience] + google.workspace.tls,
            environment: ["GCE_METADATA_HOST": google.metadataHost]
        )
        #expect(metadata.status == 0, "\(metadata)")
        #expect(metadata.jsonObject?["username"] as? String == google.metadataEmail, "\(metadata)")

        let impersonated = try await google.run(
            [
                "call", "--json", "--service-account-key", google.keyPath, "--impersonate-service-account",
                value(google, "impersonation_target"), "--iam-endpoint", value(google, "iam_endpoint"),
                "--id-token-audience", audience,
            ] + google.workspace.tls
        )
        #expect(impersonated.status == 0, "\(impersonated)")
        #expect(impersonated.jsonObject?["username"] as? String == value(google, "impersonation_target"))
    }

    @Test(
        "refusals: a forbidden target fails unauthenticated naming the endpoint; ID tokens for a user are a usage error"
    )
    func refusals() async throws {
        let google = try await Google.make()
        let forbidden = try await google.run(
            [
                "call", "--service-account-key", google.keyPath, "--impersonate-service-account",
                value(google, "impersonation_forbidden"), "--iam-endpoint", value(google, "iam_endpoint"),
            ] + google.workspace.tls
        )
        #expect(forbidden.status != 0)
        #expect(forbidden.stderr.contains("PERMISSION_DENIED"), "\(forbidden)")
        #expect(forbidden.stderr.contains(":generateAccessToken"), "\(forbidden)")
        #expect(forbidden.stderr.contains("roles/iam.serviceAccountTokenCreator"), "\(forbidden)")

        let user = try await google.run(
            ["call", "--authorized-user", google.userPath, "--id-token-audience", "https://x"] + google.workspace.tls
        )
        #expect(user.status != 0)
        #expect(user.stderr.contains("--impersonate-service-account"), "\(user)")

        let stray = try await google.run(["call", "--iam-endpoint", "https://x"] + google.workspace.tls)
        #expect(stray.status != 0)
    }
}
