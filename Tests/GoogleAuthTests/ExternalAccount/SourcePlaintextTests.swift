import Foundation
import OAuth2
import TestSupport
import Testing

@testable import GoogleAuth

/// Where a url or aws source's requests may go over plain http: loopback and the clouds'
/// link-local metadata addresses only, since the headers a credential file names and AWS's
/// IMDSv2 session token are secrets too. OAuth2 has the rule; GoogleAuth names the hosts.
@Suite("external_account sources over plain http: metadata addresses only, one AWS metadata host")
struct SourcePlaintextTests {
    static func get(_ url: String, headers: [(name: String, value: String)] = []) -> OAuthHTTPRequest {
        OAuthHTTPRequest(url: URL(string: url)!, method: "GET", headers: headers)
    }

    @Test(
        "a url source naming a plain-http host on a network is refused before anything is sent, its headers with it (before: sent to any host the file named)"
    )
    func urlSourceOffTheMachine() async throws {
        let scratch = try ScratchDirectory()
        let file = try scratch.write(
            try JSONSerialization.data(withJSONObject: [
                "type": "external_account", "audience": ExternalAccountParsingTests.audience,
                "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
                "credential_source": [
                    "url": "http://subject-token.invalid/token?key=abc",
                    "headers": ["X-Api-Key": "file-named-secret"],
                ],
            ]),
            to: "url-source.json"
        )
        let error = try #require(try await ExternalAccountTests.fetch(file: file).failure)
        #expect(error.kind == .invalidConfiguration, "\(error.message)")
        #expect(
            error.message.contains(
                "refusing the subject token endpoint http://subject-token.invalid/token: OAuth endpoints must use https"
            ),
            "\(error.message)"
        )
        #expect(error.message.contains("169.254.169.254"), "\(error.message)")
        #expect(!error.message.contains("file-named-secret") && !error.message.contains("key=abc"), "\(error.message)")
    }

    @Test("the hosts GoogleAuth names: AWS's IMDS for the aws source, the clouds' metadata addresses for a url source")
    func namedHosts() {
        let url = PlaintextAllowance.metadataServers(MetadataServerHosts.credentialSources)
        let aws = PlaintextAllowance.metadataServers(MetadataServerHosts.aws)
        let azure = Self.get(
            "http://169.254.169.254/metadata/identity/oauth2/token?api-version=2018-02-01&resource=x",
            headers: [("Metadata", "True")]
        )
        #expect(EndpointSecurity.allows(azure, plaintext: url))
        let imds = Self.get(
            "http://[fd00:ec2::254]/latest/meta-data/iam/security-credentials",
            headers: [("X-aws-ec2-metadata-token", "t")]
        )
        #expect(EndpointSecurity.allows(imds, plaintext: aws) && EndpointSecurity.allows(imds, plaintext: url))
        for elsewhere in [
            "http://imds.example/latest/api/token", "http://169.254.169.254:8080/latest/api/token",
            "http://10.0.0.1/token", "http://169.254.169.253/token",
        ] {
            #expect(!EndpointSecurity.allows(Self.get(elsewhere), plaintext: url), "\(elsewhere)")
            #expect(!EndpointSecurity.allows(Self.get(elsewhere), plaintext: aws), "\(elsewhere)")
        }
        #expect(!EndpointSecurity.allows(Self.get("http://metadata.google.internal/x"), plaintext: aws))
        // Compute Engine: its two names and the configured host, never proxied.
        let gce = PlaintextAllowance.metadataServers(
            MetadataServerHosts.computeEngine(configured: "gce.corp.example:8123")
        )
        #expect(EndpointSecurity.allows(Self.get("http://gce.corp.example:8123/computeMetadata/v1/"), plaintext: gce))
        #expect(
            EndpointSecurity.allows(Self.get("http://metadata.google.internal/computeMetadata/v1/"), plaintext: gce)
        )
        #expect(gce.neverProxies(host: "gce.corp.example") && gce.neverProxies(host: "169.254.169.254"))
    }

    @Test(
        "an aws file whose metadata URLs name different hosts is refused: the IMDSv2 token one gives would go to the other (before: accepted)",
        arguments: [
            ("http://169.254.169.254/latest/meta-data/placement/availability-zone", "http://127.0.0.1:9/role", nil),
            ("http://169.254.169.254/region", "http://169.254.169.254/role", "http://[fd00:ec2::254]/latest/api/token"),
            ("http://169.254.169.254/region", "http://169.254.169.254:8080/role", nil),
        ] as [(String, String, String?)]
    )
    func awsHostsDiffer(region: String, credentials: String, session: String?) {
        var source: [String: Any] = [
            "environment_id": "aws1",
            "regional_cred_verification_url":
                "https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15",
            "region_url": region, "url": credentials,
        ]
        source["imdsv2_session_token_url"] = session
        let result = ExternalAccountParsingTests.parse([
            "credential_source": source, "subject_token_type": "urn:ietf:params:aws:token-type:aws4_request",
        ])
        guard case .failure(let error) = result else {
            Issue.record("accepted \(region), \(credentials), \(String(describing: session))")
            return
        }
        #expect(error.message.contains("name different hosts"), "\(error.message)")
    }

    @Test("an aws file whose metadata URLs share one host is taken")
    func awsOneHost() throws {
        let source: [String: Any] = [
            "environment_id": "aws1",
            "regional_cred_verification_url":
                "https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15",
            "region_url": "http://169.254.169.254/latest/meta-data/placement/availability-zone",
            "url": "http://169.254.169.254:80/latest/meta-data/iam/security-credentials",
            "imdsv2_session_token_url": "http://169.254.169.254/latest/api/token",
        ]
        _ = try ExternalAccountParsingTests.parse([
            "credential_source": source, "subject_token_type": "urn:ietf:params:aws:token-type:aws4_request",
        ]).get()
    }
}
