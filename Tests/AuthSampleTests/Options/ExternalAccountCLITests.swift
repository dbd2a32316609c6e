import Foundation
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `auth_sample status --adc` and `call --adc` with workload identity federation files: the file
/// google-github-actions/auth writes, and an AWS file whose instance metadata URLs use a
/// production-shaped name (`instance-data.ec2.internal`), refused over plain http in a mount
/// namespace whose hosts file points it at the AWS emulator on loopback.
@Suite("auth_sample with external_account credentials", .timeLimit(.minutes(3)))
struct ExternalAccountCLITests {
    typealias Google = GoogleCredentialsCLITests.Google
    static let awsName = "instance-data.ec2.internal"

    /// A pool of the test's own, and the sandbox's federation peers.
    struct Pool {
        let google: Google
        let name = "p" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
        var process: PeerProcess { google.sandbox.process }

        func audience(_ provider: String) -> String {
            "//iam.googleapis.com/projects/\(process.string("sts_project_number"))/locations/global/workloadIdentityPools/\(name)/providers/\(provider)"
        }

        func principal(_ subject: String) -> String {
            "principal://iam.googleapis.com/projects/\(process.string("sts_project_number"))/locations/global/workloadIdentityPools/\(name)/subject/\(subject)"
        }

        /// Writes `object` as a file in the workspace and returns its path.
        func write(_ object: [String: Any], name: String) throws -> String {
            let url = google.workspace.configHome.appendingPathComponent(name)
            try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]).write(to: url)
            return url.path
        }

        /// A hosts file's text naming `name` as loopback (and keeping `localhost`).
        func hosts(naming name: String) -> String {
            "127.0.0.1 localhost\n::1 localhost\n127.0.0.1 \(name)\n"
        }
    }

    /// The file google-github-actions/auth writes for workload identity federation (its
    /// `gha-creds-*.json`), pointed at the sandbox: GitHub's ACTIONS_ID_TOKEN_REQUEST_URL with the
    /// audience, its bearer ACTIONS_ID_TOKEN_REQUEST_TOKEN, the `value` field.
    static func gitHubActionsFile(_ pool: Pool, impersonate: String? = nil) throws -> String {
        let audience = pool.audience("github")
        var url = URLComponents(string: pool.process.string("actions_id_token_request_url"))!
        url.queryItems = (url.queryItems ?? []) + [URLQueryItem(name: "audience", value: "https:" + audience)]
        var object: [String: Any] = [
            "type": "external_account",
            "audience": audience,
            "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
            "token_url": pool.process.string("sts_token_url"),
            "credential_source": [
                "url": url.string!,
                "headers": ["Authorization": "Bearer \(pool.process.string("actions_id_token_request_token"))"],
                "format": ["type": "json", "subject_token_field_name": "value"],
            ],
        ]
        if let impersonate {
            object["service_account_impersonation_url"] =
                "\(pool.process.string("iam_endpoint"))/v1/projects/-/serviceAccounts/\(impersonate):generateAccessToken"
        }
        return try pool.write(object, name: "gha-creds-\(pool.name).json")
    }

    @Test(
        "call --adc with google-github-actions/auth's file calls as the pool's principal; status shows audience, source and impersonation"
    )
    func gitHubActions() async throws {
        let google = try await Google.make()
        let pool = Pool(google: google)
        let file = try Self.gitHubActionsFile(pool)
        let requestToken = pool.process.string("actions_id_token_request_token")
        let call = try await google.run(
            ["call", "--json", "--adc", "--scope", "https://www.googleapis.com/auth/cloud-platform"]
                + google.workspace.tls,
            environment: ["GOOGLE_APPLICATION_CREDENTIALS": file]
        )
        #expect(call.status == 0, "\(call)")
        let object = try #require(call.jsonObject, "\(call)")
        #expect(object["username"] as? String == pool.principal("repo:octo-org/octo-repo:ref:refs/heads/main"))
        #expect(!call.stdout.contains(requestToken) && !call.stderr.contains(requestToken))

        let target = pool.process.string("impersonation_target")
        let impersonating = try Self.gitHubActionsFile(pool, impersonate: target)
        let status = try await google.run(
            ["status", "--adc"],
            environment: ["GOOGLE_APPLICATION_CREDENTIALS": impersonating]
        )
        #expect(status.status == 0, "\(status)")
        #expect(status.stdout.contains("Type:          external_account"), "\(status)")
        #expect(status.stdout.contains("Audience:      \(pool.audience("github"))"), "\(status)")
        #expect(
            status.stdout.contains("Subject token: url \(pool.process.string("oidc_issuer"))/_apis/actions/idtoken"),
            "\(status)"
        )
        #expect(status.stdout.contains("Impersonates:  \(target)"), "\(status)")
        #expect(!status.stdout.contains(requestToken))
    }

    @Test(
        "status --adc, text and --json, shows the token and impersonation URLs without their query (before: token_url ...?key=SECRET printed)"
    )
    func urlsShownRedacted() async throws {
        let google = try await Google.make()
        let pool = Pool(google: google)
        let secret = "k3y-" + UUID().uuidString
        let target = pool.process.string("impersonation_target")
        var object =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: try Self.gitHubActionsFile(pool, impersonate: target)))
            ) as! [String: Any]
        object["token_url"] = pool.process.string("sts_token_url") + "?key=\(secret)"
        let file = try pool.write(object, name: "query-\(pool.name).json")
        for json in [false, true] {
            let status = try await google.run(
                ["status", "--adc"] + (json ? ["--json"] : []),
                environment: ["GOOGLE_APPLICATION_CREDENTIALS": file]
            )
            #expect(status.status == 0, "\(status)")
            #expect(status.stdout.contains("exchanged at \(pool.process.string("sts_token_url"))"), "\(status)")
            #expect(!status.stdout.contains(secret) && !status.stderr.contains(secret), "\(status)")
        }
    }

    @Test("call --adc and status --adc with gcloud's external_account_authorized_user file (a workforce pool user)")
    func workforceUser() async throws {
        let google = try await Google.make()
        let pool = Pool(google: google)
        var request = URLRequest(url: URL(string: pool.process.string("sts_url") + "/sandbox/workforce-users")!)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(#"{"quota_project_id": "workforce-quota"}"#.utf8)
        let (data, _) = try await URLSession.shared.data(for: request)
        let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let file = try pool.write(document, name: "workforce-\(pool.name).json")
        let secrets = [document["refresh_token"] as? String ?? "?", document["client_secret"] as? String ?? "?"]

        let call = try await google.run(
            ["call", "--json", "--adc", "--metadata", "x-sandbox-echo-headers=1"] + google.workspace.tls,
            environment: ["GOOGLE_APPLICATION_CREDENTIALS": file]
        )
        #expect(call.status == 0, "\(call)")
        let object = try #require(call.jsonObject, "\(call)")
        #expect((object["username"] as? String)?.hasSuffix("/subject/workforce-user@example.com") == true, "\(call)")
        #expect((object["trailers"] as? [[String]])?.contains(["x-sandbox-user-project", "workforce-quota"]) == true)

        let status = try await google.run(["status", "--adc"], environment: ["GOOGLE_APPLICATION_CREDENTIALS": file])
        #expect(status.stdout.contains("Type:          external_account_authorized_user"), "\(status)")
        #expect(status.stdout.contains("Audience:      \(document["audience"] as? String ?? "?")"), "\(status)")
        for secret in secrets {
            #expect(!call.stdout.contains(secret) && !call.stderr.contains(secret) && !status.stdout.contains(secret))
        }
    }

    @Test(
        "call --adc with an AWS file naming instance-data.ec2.internal over plain http is refused before anything is sent: an aws source goes over plain http only to 169.254.169.254 or fd00:ec2::254 (before: sent, IMDSv2 token included, to any host the file named)"
    )
    func awsByProductionName() async throws {
        let google = try await Google.make()
        let pool = Pool(google: google)
        let port = try #require(URLComponents(string: pool.process.string("aws_url"))?.port)
        let metadata = "http://\(Self.awsName):\(port)"
        let audience = pool.audience("aws-ec2")
        let file = try pool.write(
            [
                "type": "external_account",
                "audience": audience,
                "subject_token_type": "urn:ietf:params:aws:token-type:aws4_request",
                "token_url": pool.process.string("sts_token_url"),
                "credential_source": [
                    "environment_id": "aws1",
                    "region_url": "\(metadata)/latest/meta-data/placement/availability-zone",
                    "url": "\(metadata)/latest/meta-data/iam/security-credentials",
                    "regional_cred_verification_url":
                        "https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15",
                    "imdsv2_session_token_url": "\(metadata)/latest/api/token",
                ],
            ],
            name: "aws-\(pool.name).json"
        )
        let hosts = pool.hosts(naming: Self.awsName)
        let status = try await google.run(
            ["status", "--adc", "--json"],
            environment: ["GOOGLE_APPLICATION_CREDENTIALS": file],
            hosts: hosts
        )
        let object = try #require(status.jsonObject, "\(status)")
        #expect(object["credential_type"] as? String == "external_account")
        #expect(object["source_kind"] as? String == "aws")
        #expect(object["audience"] as? String == audience)

        let call = try await google.run(
            ["call", "--json", "--adc", "--scope", "https://www.googleapis.com/auth/cloud-platform"]
                + google.workspace.tls,
            environment: ["GOOGLE_APPLICATION_CREDENTIALS": file],
            hosts: hosts
        )
        #expect(call.status != 0, "\(call)")
        #expect(
            call.stdout.contains("refusing the IMDSv2 session token endpoint \(metadata)/latest/api/token"),
            "\(call)"
        )
        // --json: the error is the JSON answer on standard output.
        #expect(call.stdout.contains("169.254.169.254") && call.stdout.contains("fd00:ec2::254"), "\(call)")
        #expect(try await Self.metadataRequests(pool) == 0, "the emulator heard a request for \(Self.awsName)")
    }

    /// How many metadata requests the AWS emulator has received for `awsName` (by their Host).
    static func metadataRequests(_ pool: Pool) async throws -> Int {
        let url = URL(string: pool.process.string("aws_url") + "/sandbox/requests")!
        let (data, _) = try await URLSession.shared.data(from: url)
        let object = try JSONSerialization.jsonObject(with: data)
        let requests =
            (object as? [[String: Any]]) ?? ((object as? [String: Any])?["requests"] as? [[String: Any]]) ?? []
        return requests.filter { request in
            ((request["headers"] as? [String: String]) ?? [:]).contains {
                $0.key.lowercased() == "host" && $0.value.contains(awsName)
            }
        }.count
    }
}
