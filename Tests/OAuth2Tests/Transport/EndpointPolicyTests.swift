import Foundation
import OAuth2
import Testing

/// The rule of ``EndpointSecurity`` for one request at a time: what it carries decides where it
/// may go. No request is sent.
@Suite("Endpoint policy: secrets over https only; plain http without secrets to the place allowed")
struct EndpointPolicyTests {
    static func get(_ url: String, headers: [(name: String, value: String)] = []) -> OAuthHTTPRequest {
        OAuthHTTPRequest(url: URL(string: url)!, method: "GET", headers: headers)
    }

    static func post(_ url: String, body: String) -> OAuthHTTPRequest {
        OAuthHTTPRequest(url: URL(string: url)!, method: "POST", body: Data(body.utf8))
    }

    /// Compute Engine's two names, as GoogleAuth names them (OAuth2 itself knows no host).
    static let metadata = PlaintextAllowance.metadataServers(
        MetadataHosts(["metadata.google.internal", "169.254.169.254"])
    )

    @Test("the metadata hosts named, on port 80, by GET without secrets")
    func metadataNames() {
        for url in [
            "http://metadata.google.internal/computeMetadata/v1/instance/service-accounts/default/token",
            "http://METADATA.google.internal/computeMetadata/v1/",
            "http://169.254.169.254/computeMetadata/v1/instance/service-accounts/default/identity?audience=a",
        ] {
            let request = Self.get(url, headers: [("Metadata-Flavor", "Google")])
            #expect(EndpointSecurity.allows(request, plaintext: Self.metadata), "\(url)")
            #expect(!EndpointSecurity.allows(request), "\(url) without an allowance")
        }
        for url in [
            "http://metadata.google.internal:8080/computeMetadata/v1/",  // another port is not the server
            "http://metadata.google.internal.evil.example/computeMetadata/v1/",
            "http://169.254.169.253/computeMetadata/v1/",
            "http://metadata/computeMetadata/v1/",
            "http://user@metadata.google.internal/computeMetadata/v1/",
            "ftp://metadata.google.internal/computeMetadata/v1/",
        ] {
            #expect(!EndpointSecurity.allows(Self.get(url), plaintext: Self.metadata), "\(url)")
        }
    }

    @Test("a metadata host with its port, a bare or bracketed IPv6 address, and no other host or port")
    func metadataHostsWithPorts() {
        let configured = PlaintextAllowance.metadataServers(
            MetadataHosts(["metadata.google.internal", "169.254.169.254", "Metadata.Google.Internal:8123"])
        )
        #expect(EndpointSecurity.allows(Self.get("http://metadata.google.internal:8123/x"), plaintext: configured))
        #expect(!EndpointSecurity.allows(Self.get("http://metadata.google.internal:8124/x"), plaintext: configured))
        #expect(!EndpointSecurity.allows(Self.get("http://metadata.example:8123/x"), plaintext: configured))
        #expect(EndpointSecurity.allows(Self.get("http://169.254.169.254/x"), plaintext: configured))

        let named = PlaintextAllowance.metadataServers(MetadataHosts(["gce-metadata.corp.example"]))
        #expect(EndpointSecurity.allows(Self.get("http://gce-metadata.corp.example/x"), plaintext: named))
        #expect(!EndpointSecurity.allows(Self.get("http://gce-metadata.corp.example:81/x"), plaintext: named))
        #expect(!EndpointSecurity.allows(Self.get("http://corp.example/x"), plaintext: named))

        for aws in [MetadataHosts(["[fd00:ec2::254]:80"]), MetadataHosts(["fd00:ec2::254"])] {
            let v6 = PlaintextAllowance.metadataServers(aws)
            #expect(EndpointSecurity.allows(Self.get("http://[fd00:ec2::254]/latest/api/token"), plaintext: v6))
            #expect(!EndpointSecurity.allows(Self.get("http://[fd00:ec2::255]/latest/api/token"), plaintext: v6))
            #expect(v6.neverProxies(host: "FD00:EC2::254") && v6.neverProxies(host: "[fd00:ec2::254]"))
        }
        #expect(Self.metadata.neverProxies(host: "METADATA.GOOGLE.INTERNAL."))
        #expect(!Self.metadata.neverProxies(host: "oauth2.googleapis.com"))
        #expect(!PlaintextAllowance.none.neverProxies(host: "169.254.169.254"))
        // Unreadable authorities name nothing.
        #expect(MetadataHosts(["", "http://x/", "a:99999", "u@h"]).description == "")
    }

    @Test("a request that carries a secret is refused over http, whatever the allowance names")
    func secretsNeverInTheClear() throws {
        let url = "http://metadata.google.internal/computeMetadata/v1/instance/service-accounts/default/token"
        let form = Self.post(url, body: "grant_type=refresh_token&refresh_token=rt")
        let bearer = Self.get(url, headers: [("Authorization", "Bearer secret")])
        let proxy = Self.get(url, headers: [("proxy-authorization", "Basic eDp5")])
        for request in [form, bearer, proxy] {
            #expect(!EndpointSecurity.allows(request, plaintext: Self.metadata))
        }
        let error = try #require(throws: OAuthError.self) {
            try EndpointSecurity.require(form, plaintext: Self.metadata, for: "the metadata token endpoint")
        }
        #expect(error.kind == .invalidConfiguration)
        #expect(error.message.contains("carries a secret"), "\(error.message)")
        #expect(!error.message.contains("refresh_token=rt"))
        // The same request over https, or to loopback, is fine.
        #expect(EndpointSecurity.allows(Self.post("https://oauth2.example/token", body: "a=b")))
        #expect(EndpointSecurity.allows(Self.post("http://127.0.0.1:9/token", body: "a=b")))
    }

    @Test("without an allowance the refusal says https, as before; with one it names the place")
    func messages() throws {
        let plain = try #require(throws: OAuthError.self) {
            try EndpointSecurity.require(
                Self.get("http://issuer.example/token"),
                plaintext: .none,
                for: "the token endpoint"
            )
        }
        #expect(
            plain.message.contains("OAuth endpoints must use https (plain http is allowed on loopback addresses only)")
        )
        let elsewhere = try #require(throws: OAuthError.self) {
            try EndpointSecurity.require(
                Self.get("http://elsewhere.example/x"),
                plaintext: Self.metadata,
                for: "the metadata token endpoint"
            )
        }
        #expect(elsewhere.message.contains("metadata.google.internal"), "\(elsewhere.message)")
    }
}
