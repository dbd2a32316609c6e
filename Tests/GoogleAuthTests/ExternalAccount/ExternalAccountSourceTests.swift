import AuthRPC
import AuthSampleService
import Foundation
import GoogleAuth
import OAuth2
import TestSupport
import Testing

/// The executable and AWS sources, and impersonation, against the sandbox: a real credential
/// helper program (and the ways it misbehaves), the AWS emulator whose botocore check must
/// accept our SigV4 signature, the IAM Credentials emulator.
@Suite("external_account executable and aws sources, impersonation", .timeLimit(.minutes(3)))
struct ExternalAccountSourceTests {
    static let allow = ["GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES": "1"]
    static let helper = PackageRoot.url.appendingPathComponent("Examples/Sandbox/executable_source.py").path

    /// An executable-source file running the sandbox's helper in `mode`.
    static func executableFile(
        _ federation: FederationSandbox,
        _ scratch: ScratchDirectory,
        mode: String,
        timeoutMillis: Int = 5000,
        outputFile: String? = nil,
        name: String
    ) async throws -> (file: String, calls: String, environment: String) {
        let audience = federation.audience()
        let tokenPath = try scratch.write(Data(try await federation.mint(audience: audience).utf8), to: "\(name).token")
        let calls = scratch.url.appendingPathComponent("\(name).calls").path
        let environment = scratch.url.appendingPathComponent("\(name).environment").path
        var executable: [String: any Sendable] = [
            "command":
                "\(PackageRoot.python.path) \(helper) --token-file \(tokenPath) --mode \(mode) --calls-file \(calls) --environment-file \(environment)",
            "timeout_millis": timeoutMillis,
        ]
        if let outputFile { executable["output_file"] = outputFile }
        let file = try scratch.write(
            federation.credentialFile(audience: audience, source: ["executable": executable]),
            to: "\(name).json"
        )
        return (file, calls, environment)
    }

    static func runs(_ calls: String) -> Int {
        ((try? String(contentsOfFile: calls, encoding: .utf8)) ?? "").split(separator: "\n").count
    }

    @Test("executable source: runs only when allowed, gets google-auth's variables, and its output_file is a cache")
    func executableSource() async throws {
        let federation = try await FederationSandbox.make()
        let scratch = try ScratchDirectory()
        let output = scratch.url.appendingPathComponent("cache.json").path
        let (file, calls, environment) = try await Self.executableFile(
            federation,
            scratch,
            mode: "ok",
            outputFile: output,
            name: "ok"
        )
        let refused = try #require(try await ExternalAccountTests.fetch(file: file).failure)
        #expect(refused.message.contains("GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1"), "\(refused.message)")
        #expect(Self.runs(calls) == 0)

        let credentials = try ExternalAccountTests.credentials(file: file, environment: Self.allow)
        let response = try await federation.google.call(credentials)
        #expect(
            response.message.username == federation.principal(subject: "repo:octo-org/octo-repo:ref:refs/heads/main")
        )
        #expect(Self.runs(calls) == 1)
        let seen =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: environment)))
            as? [String: String]
        #expect(
            seen == [
                "GOOGLE_EXTERNAL_ACCOUNT_AUDIENCE": federation.audience(),
                "GOOGLE_EXTERNAL_ACCOUNT_TOKEN_TYPE": "urn:ietf:params:oauth:token-type:jwt",
                "GOOGLE_EXTERNAL_ACCOUNT_INTERACTIVE": "0",
                "GOOGLE_EXTERNAL_ACCOUNT_REVOKE": "0",
                "GOOGLE_EXTERNAL_ACCOUNT_ID": "",
                "GOOGLE_EXTERNAL_ACCOUNT_OUTPUT_FILE": output,
                "GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES": "1",
            ],
            "\(String(describing: seen))"
        )
        // A second source reads the unexpired answer the helper cached instead of running it.
        #expect(try await ExternalAccountTests.fetch(file: file, environment: Self.allow).success != nil)
        #expect(Self.runs(calls) == 1)
    }

    @Test(
        "a helper that hangs is killed at its timeout; one that prints 10 MB, exits 3, fails or answers expired is reported"
    )
    func hostileExecutables() async throws {
        let federation = try await FederationSandbox.make()
        let scratch = try ScratchDirectory()
        let cases: [(mode: String, says: String)] = [
            ("hang", "did not finish within"),
            ("flood", "printed more than"),
            ("exit", "exited with status 3"),
            ("failure", "the helper is not signed in"),
            ("expired", "expired"),
            ("not-json", "JSON"),
        ]
        for (mode, says) in cases {
            let (file, _, _) = try await Self.executableFile(federation, scratch, mode: mode, name: mode)
            let error = try #require(try await ExternalAccountTests.fetch(file: file, environment: Self.allow).failure)
            #expect(
                error.message.contains(
                    "(executable source): reading the subject token from \(PackageRoot.python.path)"
                ),
                "\(mode): \(error.message)"
            )
            #expect(error.message.contains(says), "\(mode): \(error.message)")
            #expect(error.message.utf8.count < 8192, "\(mode): \(error.message.utf8.count) bytes")
            #expect(!error.message.contains("eyJ"), "\(mode): \(error.message)")
        }
        let exit = try await Self.executableFile(federation, scratch, mode: "exit", name: "exit-again")
        let error = try #require(try await ExternalAccountTests.fetch(file: exit.file, environment: Self.allow).failure)
        #expect(error.message.contains("cannot reach the identity provider"), "the helper's stderr: \(error.message)")
    }

    /// An AWS source file; the metadata URLs are the emulator's when `imds`.
    static func awsFile(
        _ federation: FederationSandbox,
        _ scratch: ScratchDirectory,
        imds: Bool,
        name: String
    ) throws -> String {
        var source: [String: any Sendable] = [
            "environment_id": "aws1",
            "regional_cred_verification_url":
                "https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15",
        ]
        if imds {
            source["region_url"] = federation.awsURL + "/latest/meta-data/placement/availability-zone"
            source["url"] = federation.awsURL + "/latest/meta-data/iam/security-credentials"
            source["imdsv2_session_token_url"] = federation.awsURL + "/latest/api/token"
        }
        return try scratch.write(
            federation.credentialFile(
                audience: federation.audience(provider: "aws-prod"),
                subjectTokenType: "urn:ietf:params:aws:token-type:aws4_request",
                source: source
            ),
            to: "\(name).json"
        )
    }

    @Test(
        "aws source with IMDSv2: the session token goes with every metadata request, and botocore accepts our signature"
    )
    func awsIMDSv2() async throws {
        let federation = try await FederationSandbox.make()
        let scratch = try ScratchDirectory()
        let file = try Self.awsFile(federation, scratch, imds: true, name: "imds")
        let response = try await federation.google.call(try ExternalAccountTests.credentials(file: file))
        #expect(
            response.message.username.hasPrefix(federation.principal(subject: "arn:aws:sts::")),
            "\(response.message.username)"
        )
        let requests = try await federation.awsMetadataRequests()
        #expect(requests.contains { $0["method"] as? String == "PUT" })
        for request in requests where request["method"] as? String == "GET" {
            let headers = (request["headers"] as? [String: String]) ?? [:]
            #expect(headers.keys.contains { $0.lowercased() == "x-aws-ec2-metadata-token" }, "\(request)")
        }
        let exchange = try #require(
            try await federation.exchanges(for: federation.audience(provider: "aws-prod")).first
        )
        let subject = try #require(exchange["subject"] as? [String: Any])
        #expect(subject["method"] as? String == "POST")
        #expect(
            subject["url"] as? String
                == "https://sts.\(federation.awsRegion).amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15"
        )
        let names = ((subject["headers"] as? [[String: String]]) ?? []).compactMap { $0["key"] }
        #expect(
            Set(names) == [
                "Authorization", "host", "x-amz-date", "x-amz-security-token", "x-goog-cloud-target-resource",
            ],
            "\(names)"
        )
    }

    @Test("aws source with environment credentials; a wrong secret is refused by botocore's check and named")
    func awsEnvironment() async throws {
        let federation = try await FederationSandbox.make()
        let scratch = try ScratchDirectory()
        let file = try Self.awsFile(federation, scratch, imds: false, name: "environment")
        let keys = try await federation.awsKeys()
        let environment = [
            "AWS_REGION": federation.awsRegion, "AWS_ACCESS_KEY_ID": keys["access_key_id"]!,
            "AWS_SECRET_ACCESS_KEY": keys["secret_access_key"]!,
        ]
        #expect(try await ExternalAccountTests.fetch(file: file, environment: environment).success != nil)
        var wrong = environment
        wrong["AWS_SECRET_ACCESS_KEY"] = String(keys["secret_access_key"]!.reversed())
        let error = try #require(try await ExternalAccountTests.fetch(file: file, environment: wrong).failure)
        #expect(error.oauthErrorCode == "invalid_grant", "\(error.message)")
        #expect(error.message.contains("(aws source): exchanging the subject token"), "\(error.message)")
        #expect(
            !error.message.contains(keys["secret_access_key"]!)
                && !error.message.contains(wrong["AWS_SECRET_ACCESS_KEY"]!)
        )
    }

    @Test("impersonation: the federated token asks IAM Credentials for the service account's, with the file's lifetime")
    func impersonation() async throws {
        let federation = try await FederationSandbox.make()
        let scratch = try ScratchDirectory()
        let audience = federation.audience()
        let subject = "repo:octo-org/octo-repo:ref:refs/heads/main"
        try await federation.allowImpersonation(
            of: federation.impersonationTarget,
            by: federation.principal(subject: subject)
        )
        let tokenPath = try scratch.write(Data(try await federation.mint(audience: audience).utf8), to: "token")
        let file = try scratch.write(
            federation.credentialFile(
                audience: audience,
                source: ["file": tokenPath],
                extra: [
                    "service_account_impersonation_url": federation.impersonationURL(
                        of: federation.impersonationTarget
                    ),
                    "service_account_impersonation": ["token_lifetime_seconds": 1200],
                ]
            ),
            to: "impersonate.json"
        )
        let credentials = try ExternalAccountTests.credentials(file: file)
        #expect(credentials.identity.principal == federation.impersonationTarget)
        let response = try await federation.google.call(credentials)
        #expect(response.message.username == federation.impersonationTarget)
        let request = try #require(
            try await federation.iamRequests().last {
                $0["caller"] as? String == federation.principal(subject: subject)
            }
        )
        let body = try #require(request["body"] as? [String: Any])
        #expect(body["lifetime"] as? String == "1200s")
        #expect(body["scope"] as? [String] == [ExternalAccountTests.scope])

        // A federated principal nobody granted: IAM's refusal, named as the impersonation step.
        let other = FederationSandbox(google: federation.google)
        let otherToken = try scratch.write(Data(try await other.mint(audience: other.audience()).utf8), to: "other")
        let refused = try scratch.write(
            other.credentialFile(
                audience: other.audience(),
                source: ["file": otherToken],
                extra: ["service_account_impersonation_url": other.impersonationURL(of: other.impersonationTarget)]
            ),
            to: "refused.json"
        )
        let error = try #require(try await ExternalAccountTests.fetch(file: refused).failure)
        #expect(
            error.message.contains("(file source): impersonating \(other.impersonationTarget) at"),
            "\(error.message)"
        )
        #expect(error.kind == .authorization, "\(error.message)")
    }
}
