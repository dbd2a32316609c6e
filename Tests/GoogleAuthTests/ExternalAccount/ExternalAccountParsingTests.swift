import Foundation
import OAuth2
import Testing

@testable import GoogleAuth

/// The I/O-free parts of identity federation: the credential file's checks, the exchange's form,
/// the executable's response, and AWS Signature Version 4 against values botocore computed.
@Suite("external_account parsing, exchange form, executable response, SigV4")
struct ExternalAccountParsingTests {
    static let audience =
        "//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/pool/providers/github"

    static func parse(_ changes: [String: Any?]) -> Result<ExternalAccountCredentials, OAuthError> {
        var object: [String: Any] = [
            "type": "external_account", "audience": audience,
            "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
            "credential_source": ["file": "/var/run/token"],
        ]
        for (key, value) in changes { object[key] = value }
        let data = try! JSONSerialization.data(withJSONObject: object)
        do throws(OAuthError) {
            return .success(try ExternalAccountCredentials(json: data, source: "creds.json"))
        } catch {
            return .failure(error)
        }
    }

    @Test("defaults: Google's STS, one hour of impersonation, the audience as principal")
    func defaults() throws {
        let credentials = try Self.parse([:]).get()
        #expect(credentials.tokenURL.absoluteString == "https://sts.googleapis.com/v1/token")
        #expect(credentials.impersonationLifetime == .seconds(3600))
        #expect(credentials.credentialSource.kind == .file)
        #expect(credentials.identity.principal == Self.audience)
        #expect(!credentials.isWorkforcePool)
    }

    @Test("each wrong field is named, never its value")
    func refusals() {
        let cases: [([String: Any?], String)] = [
            (["audience": nil], "creds.json has no audience"),
            (["credential_source": ["file": "/a", "url": "https://x/y"]], "names file and url; give exactly one"),
            (["credential_source": [:] as [String: Any]], "names no file, url, executable or AWS environment_id"),
            (["token_url": "http://sts.googleapis.com/v1/token"], "token_url in creds.json is http://"),
            (
                [
                    "service_account_impersonation_url":
                        "https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/nobody"
                ],
                "does not end in /serviceAccounts/EMAIL:generateAccessToken"
            ),
            (
                [
                    "service_account_impersonation_url":
                        "https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/a@b.c:generateAccessToken",
                    "service_account_impersonation": ["token_lifetime_seconds": 50000],
                ],
                "is 50000; it must be 600 to 43200 seconds"
            ),
            (["workforce_pool_user_project": "p"], "is only for a workforce pool"),
            (["client_secret": "hidden-secret-value"], "has a client_secret but no client_id"),
            (
                ["subject_token_type": "urn:ietf:params:aws:token-type:aws4_request"],
                "subject_token_type is AWS's, but the credential_source has no AWS environment_id"
            ),
            (
                ["credential_source": ["executable": ["command": "relative/helper", "timeout_millis": 1000]]],
                "credential_source.executable"
            ),
        ]
        for (changes, says) in cases {
            guard case .failure(let error) = Self.parse(changes) else {
                Issue.record("accepted \(changes)")
                continue
            }
            #expect(error.kind == .invalidConfiguration)
            #expect(error.message.contains(says), "\(error.message)")
            #expect(!error.message.contains("hidden-secret-value"))
        }
    }

    @Test("an AWS source's url is its role metadata URL, not a second source")
    func awsSource() throws {
        let credentials = try Self.parse([
            "subject_token_type": "urn:ietf:params:aws:token-type:aws4_request",
            "credential_source": [
                "environment_id": "aws1",
                "url": "http://169.254.169.254/latest/meta-data/iam/security-credentials",
                "regional_cred_verification_url":
                    "https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15",
            ],
        ]).get()
        #expect(credentials.credentialSource.kind == .aws)
    }

    @Test("the exchange form, in google-auth's order; options only for a workforce pool without a client")
    func exchangeForm() {
        var exchange = TokenExchange(
            audience: Self.audience,
            subjectTokenType: "urn:ietf:params:oauth:token-type:jwt",
            scopes: ["a", "b"],
            workforcePoolUserProject: nil,
            hasClient: false
        )
        #expect(
            exchange.parameters(subjectToken: "T").map(\.0) == [
                "grant_type", "audience", "scope", "requested_token_type", "subject_token", "subject_token_type",
            ]
        )
        #expect(exchange.parameters(subjectToken: "T").first { $0.0 == "scope" }?.1 == "a b")
        exchange.workforcePoolUserProject = "proj\"ect"
        #expect(exchange.options == #"{"userProject":"proj\"ect"}"#)
        exchange.hasClient = true
        #expect(exchange.options == nil)
    }

    @Test("executable responses: a token, or why not (never quoting the token)")
    func executableResponses() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        func parse(_ json: String) -> Result<ExecutableResponse, ExecutableResponse.Refusal> {
            do throws(ExecutableResponse.Refusal) {
                return .success(try ExecutableResponse.parse(Array(json.utf8), now: now))
            } catch {
                return .failure(error)
            }
        }
        let ok = parse(
            #"{"version":1,"success":true,"token_type":"urn:ietf:params:oauth:token-type:jwt","id_token":"tok","expiration_time":1700000600}"#
        )
        #expect((try? ok.get())?.token == "tok")
        let cases: [(String, ExecutableResponse.Refusal.Kind)] = [
            ("not json", .malformed),
            (#"{"version":2,"success":true}"#, .malformed),
            (#"{"version":1,"success":false,"code":"401","message":"no"}"#, .unsuccessful),
            (
                #"{"version":1,"success":true,"token_type":"urn:ietf:params:oauth:token-type:jwt","id_token":"secret-tok","expiration_time":1699999999}"#,
                .expired
            ),
            (
                #"{"version":1,"success":true,"token_type":"urn:ietf:params:oauth:token-type:access_token","id_token":"secret-tok"}"#,
                .malformed
            ),
        ]
        for (json, kind) in cases {
            guard case .failure(let refusal) = parse(json) else {
                Issue.record("accepted \(json)")
                continue
            }
            #expect(refusal.kind == kind, "\(json): \(refusal.reason)")
            #expect(!refusal.reason.contains("secret-tok"))
        }
    }

    /// botocore's SigV4Auth gave these signatures for the same request, keys and time
    /// (2015-08-30T12:36:00Z, us-east-1, no body): our signing agrees with AWS's own library.
    @Test("SigV4 of GetCallerIdentity matches botocore's, with and without a session token")
    func sigV4() throws {
        let url = "https://sts.us-east-1.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15"
        let date = Date(timeIntervalSince1970: 1_440_938_160)
        for (token, names, signature) in [
            (nil, "host;x-amz-date", "5d0127c0c30e5d37ec488220bd15b058e0dbf1c17f31d2da6f73a1626d2fc696"),
            (
                "session-token-example", "host;x-amz-date;x-amz-security-token",
                "d296bdca93655d48122a84bd96b788454b41656183cf7e58c7c46b8e3a961e6c"
            ),
        ] as [(String?, String, String)] {
            let request = try AWSSignedRequest.getCallerIdentity(
                url: url,
                region: "us-east-1",
                credentials: .init(
                    accessKeyID: "AKIDEXAMPLE",
                    secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                    sessionToken: token
                ),
                targetResource: Self.audience,
                date: date
            )
            #expect(
                request.headers.first?.value
                    == "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/sts/aws4_request, SignedHeaders=\(names), Signature=\(signature)"
            )
            #expect(request.headers.first { $0.key == "x-amz-date" }?.value == "20150830T123600Z")
            #expect(!request.subjectToken.contains("wJalrXUtnFEMI"))
        }
    }
}
