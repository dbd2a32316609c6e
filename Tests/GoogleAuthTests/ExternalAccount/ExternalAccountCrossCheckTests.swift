import AuthRPC
import AuthSampleService
import Foundation
import GoogleAuth
import OAuth2
import TestSupport
import Testing

/// google-auth (PyPI) and this package refresh the same external_account file against the same
/// emulators: the Security Token Service (and IAM Credentials) must receive the same requests,
/// field by field, and the gRPC service must see the same caller with either token.
@Suite("external_account cross-checked with google-auth", .timeLimit(.minutes(3)))
struct ExternalAccountCrossCheckTests {
    static let gitHubSubject = "repo:octo-org/octo-repo:ref:refs/heads/main"

    enum Source: String, CaseIterable, Sendable {
        case file, url, executable, aws
    }

    /// The credential file for `source` in `federation`'s pool, and the environment both
    /// libraries run in.
    static func setUp(
        _ source: Source,
        _ federation: FederationSandbox,
        _ scratch: ScratchDirectory,
        impersonate: Bool
    ) async throws -> (file: String, environment: [String: String], audience: String, subject: String) {
        let provider = source == .aws ? "aws-prod" : "github"
        let audience = federation.audience(provider: provider)
        var extra: [String: any Sendable] = [:]
        if impersonate {
            extra["service_account_impersonation_url"] = federation.impersonationURL(of: federation.impersonationTarget)
            extra["service_account_impersonation"] = ["token_lifetime_seconds": 1800]
        }
        let subjectTokenType = "urn:ietf:params:oauth:token-type:jwt"
        switch source {
        case .file:
            let token = try scratch.write(Data(try await federation.mint(audience: audience).utf8), to: "token")
            let file = try scratch.write(
                federation.credentialFile(audience: audience, source: ["file": token], extra: extra),
                to: "file.json"
            )
            return (file, [:], audience, gitHubSubject)
        case .url:
            var url = URLComponents(string: federation.actionsRequestURL)!
            url.queryItems = (url.queryItems ?? []) + [URLQueryItem(name: "audience", value: "https:" + audience)]
            let file = try scratch.write(
                federation.credentialFile(
                    audience: audience,
                    source: [
                        "url": url.string!,
                        "headers": ["Authorization": "Bearer \(federation.actionsRequestToken)"],
                        "format": ["type": "json", "subject_token_field_name": "value"],
                    ],
                    extra: extra
                ),
                to: "url.json"
            )
            return (file, [:], audience, gitHubSubject)
        case .executable:
            let token = try scratch.write(Data(try await federation.mint(audience: audience).utf8), to: "token")
            let environmentFile = scratch.url.appendingPathComponent("environment-\(UUID().uuidString).json").path
            let command =
                "\(PackageRoot.python.path) \(ExternalAccountSourceTests.helper) --token-file \(token) --environment-file \(environmentFile)"
            let file = try scratch.write(
                federation.credentialFile(
                    audience: audience,
                    subjectTokenType: subjectTokenType,
                    source: ["executable": ["command": command, "timeout_millis": 10000] as [String: any Sendable]],
                    extra: extra
                ),
                to: "executable.json"
            )
            return (file, ["GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES": "1"], audience, gitHubSubject)
        case .aws:
            let keys = try await federation.awsKeys(temporary: true)
            let file = try scratch.write(
                federation.credentialFile(
                    audience: audience,
                    subjectTokenType: "urn:ietf:params:aws:token-type:aws4_request",
                    source: [
                        "environment_id": "aws1",
                        "regional_cred_verification_url":
                            "https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15",
                    ],
                    extra: extra
                ),
                to: "aws.json"
            )
            return (
                file,
                [
                    "AWS_REGION": federation.awsRegion, "AWS_ACCESS_KEY_ID": keys["access_key_id"]!,
                    "AWS_SECRET_ACCESS_KEY": keys["secret_access_key"]!, "AWS_SESSION_TOKEN": keys["session_token"]!,
                ],
                audience,
                keys["arn"]!
            )
        }
    }

    /// What two subject tokens must share: a JWT's header and claims without the per-token
    /// ones, or the AWS request's method, URL, header names and target resource.
    static func comparable(_ subject: [String: Any]?) -> NSDictionary {
        guard let subject else { return [:] }
        if var claims = subject["claims"] as? [String: Any] {
            for name in ["iat", "exp", "nbf", "jti"] { claims[name] = nil }
            return ["header": subject["header"] ?? [:], "claims": claims]
        }
        let headers = (subject["headers"] as? [[String: String]]) ?? []
        let target = headers.first { $0["key"] == "x-goog-cloud-target-resource" }?["value"] ?? ""
        return [
            "method": subject["method"] ?? "", "url": subject["url"] ?? "",
            "headers": headers.compactMap { $0["key"] }.sorted(), "target": target,
        ]
    }

    @Test("the same exchange and the same caller as google-auth", arguments: Source.allCases, [false, true])
    func sameRequests(source: Source, impersonate: Bool) async throws {
        let federation = try await FederationSandbox.make()
        let scratch = try ScratchDirectory()
        let (file, environment, audience, subject) = try await Self.setUp(
            source,
            federation,
            scratch,
            impersonate: impersonate
        )
        if impersonate {
            try await federation.allowImpersonation(
                of: federation.impersonationTarget,
                by: federation.principal(subject: subject)
            )
        }

        let ours = try #require(
            try await ExternalAccountTests.fetch(file: file, environment: environment).success,
            "this package got no token"
        )
        let oursEnvironment = try? Data(contentsOf: URL(fileURLWithPath: environmentFile(file)))
        let theirs = try await GoogleAuthReference.externalAccountToken(
            file: file,
            scopes: [ExternalAccountTests.scope],
            environment: environment
        )
        let theirsEnvironment = try? Data(contentsOf: URL(fileURLWithPath: environmentFile(file)))

        let exchanges = try await federation.exchanges(for: audience)
        try #require(exchanges.count == 2, "\(exchanges.count) exchanges")
        var oursForm = exchanges[0]["form"] as? [String: String] ?? [:]
        var theirsForm = exchanges[1]["form"] as? [String: String] ?? [:]
        #expect(
            Self.comparable(exchanges[0]["subject"] as? [String: Any])
                == Self.comparable(exchanges[1]["subject"] as? [String: Any])
        )
        if source == .file || source == .executable {
            #expect(oursForm["subject_token"] == theirsForm["subject_token"])
        }
        oursForm["subject_token"] = nil
        theirsForm["subject_token"] = nil
        #expect(oursForm == theirsForm)
        #expect(exchanges[0]["authorization"] is NSNull && exchanges[1]["authorization"] is NSNull)
        #expect(exchanges[0]["content_type"] as? String == exchanges[1]["content_type"] as? String)

        if source == .executable, let oursEnvironment, let theirsEnvironment {
            let mine = try JSONSerialization.jsonObject(with: oursEnvironment) as? [String: String] ?? [:]
            let google = try JSONSerialization.jsonObject(with: theirsEnvironment) as? [String: String] ?? [:]
            // google-auth runs the program for a copy of the credentials without impersonation,
            // so it never says which account is impersonated; the executable-source contract says
            // GOOGLE_EXTERNAL_ACCOUNT_IMPERSONATED_EMAIL is set then, and this package sets it.
            let impersonationVariables = ["GOOGLE_EXTERNAL_ACCOUNT_ID", "GOOGLE_EXTERNAL_ACCOUNT_IMPERSONATED_EMAIL"]
            for (name, value) in google where !(impersonate && impersonationVariables.contains(name)) {
                #expect(mine[name] == value, "\(name): ours \(mine[name] ?? "unset"), google-auth's \(value)")
            }
            if impersonate {
                #expect(mine["GOOGLE_EXTERNAL_ACCOUNT_IMPERSONATED_EMAIL"] == federation.impersonationTarget)
            }
        }

        if impersonate {
            // Both callers are this test's pool principal (the emulator's record is shared).
            let principal = federation.principal(subject: subject)
            let requests = try await federation.iamRequests().filter { $0["caller"] as? String == principal }
            try #require(requests.count == 2, "\(requests.count) requests from \(principal)")
            // The one difference: no delegation chain is `"delegates": []` in IAMCredentials'
            // request and `null` in google-auth's; the API reads both as none.
            let bodies = requests.map { request in
                var body = request["body"] as? [String: Any] ?? [:]
                if body["delegates"] is NSNull || (body["delegates"] as? [Any])?.isEmpty == true {
                    body["delegates"] = []
                }
                return NSDictionary(dictionary: body)
            }
            #expect(bodies[0] == bodies[1], "ours \(bodies[0]), google-auth's \(bodies[1])")
            #expect((requests[0]["body"] as? [String: Any])?["lifetime"] as? String == "1800s")
        }

        let oursCaller = try await federation.google.whoAmI(token: ours.accessToken).user
        let theirsCaller = try await federation.google.whoAmI(token: theirs).user
        #expect(oursCaller == theirsCaller)
        #expect(oursCaller == (impersonate ? federation.impersonationTarget : federation.principal(subject: subject)))
    }

    /// The helper's environment file named in an executable-source `file`, or "" for the others.
    func environmentFile(_ file: String) -> String {
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: file)),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let source = object["credential_source"] as? [String: Any],
            let executable = source["executable"] as? [String: Any], let command = executable["command"] as? String
        else { return "" }
        let words = command.split(separator: " ").map(String.init)
        guard let index = words.firstIndex(of: "--environment-file"), index + 1 < words.count else { return "" }
        return words[index + 1]
    }
}
