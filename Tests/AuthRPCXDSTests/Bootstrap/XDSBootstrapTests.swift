import Foundation
import SwiftProtobuf
import Testing

@testable import AuthRPCXDS

@Suite("XDSBootstrap")
struct XDSBootstrapTests {
    static let full = """
        {
          "xds_servers": [
            {"server_uri": "dns:///xds.example.com:443",
             "channel_creds": [{"type": "mtls_unknown"}, {"type": "google_default"}, {"type": "insecure"}],
             "server_features": ["xds_v3", "ignore_resource_deletion", "some_future_feature"]},
            {"server_uri": "127.0.0.1:18001", "channel_creds": [{"type": "insecure", "config": {}}]}
          ],
          "node": {
            "id": "projects/1/nodes/client-1", "cluster": "payments",
            "locality": {"region": "eu", "zone": "eu-1a", "sub_zone": "rack7"},
            "metadata": {"TRAFFICDIRECTOR_NETWORK_NAME": "default", "n": 2, "nested": {"ok": true}}
          },
          "certificate_providers": {"ignored": {}},
          "authorities": {}
        }
        """

    @Test("every field gRPC reads is read: servers in order, the first supported creds, features, node")
    func fullBootstrap() throws {
        let bootstrap = try XDSBootstrap(json: Self.full)
        #expect(bootstrap.servers.count == 2)
        #expect(bootstrap.server.serverURI == "dns:///xds.example.com:443")
        #expect(bootstrap.server.channelCredentials == .googleDefault)
        #expect(bootstrap.server.serverFeatures == ["xds_v3", "ignore_resource_deletion", "some_future_feature"])
        #expect(bootstrap.server.ignoresResourceDeletion)
        #expect(bootstrap.servers[1].channelCredentials == .insecure)
        #expect(!bootstrap.servers[1].ignoresResourceDeletion)
        #expect(bootstrap.node.id == "projects/1/nodes/client-1")
        #expect(bootstrap.node.cluster == "payments")
        #expect(bootstrap.node.locality == XDSNode.Locality(region: "eu", zone: "eu-1a", subZone: "rack7"))
        #expect(bootstrap.node.metadata.fields["TRAFFICDIRECTOR_NETWORK_NAME"]?.stringValue == "default")
        #expect(bootstrap.node.metadata.fields["n"]?.numberValue == 2)
        #expect(bootstrap.node.metadata.fields["nested"]?.structValue.fields["ok"]?.boolValue == true)
    }

    @Test("a minimal bootstrap: one insecure server, no node")
    func minimal() throws {
        let bootstrap = try XDSBootstrap(
            json: #"{"xds_servers": [{"server_uri": "localhost:1", "channel_creds": [{"type": "insecure"}]}]}"#
        )
        #expect(bootstrap.server == XDSServer(serverURI: "localhost:1", channelCredentials: .insecure))
        #expect(bootstrap.node == XDSNode())
        #expect(bootstrap.node.locality == nil)
    }

    @Test(
        "a bad bootstrap is refused with the field at fault named",
        arguments: [
            ("[]", ""),
            ("not json", ""),
            ("{}", "xds_servers"),
            (#"{"xds_servers": []}"#, "xds_servers"),
            (#"{"xds_servers": {}}"#, "xds_servers"),
            (#"{"xds_servers": [7]}"#, "xds_servers[0]"),
            (#"{"xds_servers": [{"channel_creds": [{"type": "insecure"}]}]}"#, "xds_servers[0].server_uri"),
            (
                #"{"xds_servers": [{"server_uri": "", "channel_creds": [{"type": "insecure"}]}]}"#,
                "xds_servers[0].server_uri"
            ),
            (
                #"{"xds_servers": [{"server_uri": 5, "channel_creds": [{"type": "insecure"}]}]}"#,
                "xds_servers[0].server_uri"
            ),
            (#"{"xds_servers": [{"server_uri": "a:1"}]}"#, "xds_servers[0].channel_creds"),
            (#"{"xds_servers": [{"server_uri": "a:1", "channel_creds": []}]}"#, "xds_servers[0].channel_creds"),
            (
                #"{"xds_servers": [{"server_uri": "a:1", "channel_creds": [{"type": "tls"}]}]}"#,
                "xds_servers[0].channel_creds"
            ),
            (
                #"{"xds_servers": [{"server_uri": "a:1", "channel_creds": [{"config": {}}]}]}"#,
                "xds_servers[0].channel_creds[0].type"
            ),
            (
                #"{"xds_servers": [{"server_uri": "a:1", "channel_creds": [{"type": "insecure", "config": 1}]}]}"#,
                "xds_servers[0].channel_creds[0].config"
            ),
            (
                #"{"xds_servers": [{"server_uri": "a:1", "channel_creds": [{"type": "insecure"}], "server_features": [1]}]}"#,
                "xds_servers[0].server_features[0]"
            ),
            (#"{"xds_servers": [{"server_uri": "a:1", "channel_creds": [{"type": "insecure"}]}], "node": []}"#, "node"),
            (
                #"{"xds_servers": [{"server_uri": "a:1", "channel_creds": [{"type": "insecure"}]}], "node": {"id": 1}}"#,
                "node.id"
            ),
            (
                #"{"xds_servers": [{"server_uri": "a:1", "channel_creds": [{"type": "insecure"}]}], "node": {"locality": {"zone": true}}}"#,
                "node.locality.zone"
            ),
            (
                #"{"xds_servers": [{"server_uri": "a:1", "channel_creds": [{"type": "insecure"}]}], "node": {"metadata": "x"}}"#,
                "node.metadata"
            ),
        ]
    )
    func refused(json: String, field: String) {
        #expect {
            _ = try XDSBootstrap(json: json)
        } throws: { error in
            guard let error = error as? XDSBootstrapError else { return false }
            return error.field == field && error.description.hasPrefix("invalid xDS bootstrap: ")
                && (field.isEmpty || error.description.contains(field))
        }
    }

    @Test("channel creds naming only unsupported types say which types were seen")
    func unsupportedCredsNamed() {
        let json = #"{"xds_servers": [{"server_uri": "a:1", "channel_creds": [{"type": "tls"}, {"type": "jwt"}]}]}"#
        #expect(
            throws: XDSBootstrapError(
                field: "xds_servers[0].channel_creds",
                problem: "no supported type (insecure, google_default): it names only 'tls', 'jwt'"
            )
        ) {
            _ = try XDSBootstrap(json: json)
        }
    }

    @Test("GRPC_XDS_BOOTSTRAP names a file, read before GRPC_XDS_BOOTSTRAP_CONFIG")
    func fileFirst() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("xds-bootstrap-\(UUID()).json").path
        try Data(#"{"xds_servers": [{"server_uri": "from-file:1", "channel_creds": [{"type": "insecure"}]}]}"#.utf8)
            .write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let inline = #"{"xds_servers": [{"server_uri": "inline:1", "channel_creds": [{"type": "insecure"}]}]}"#
        let both = try XDSBootstrap.fromEnvironment(["GRPC_XDS_BOOTSTRAP": path, "GRPC_XDS_BOOTSTRAP_CONFIG": inline])
        #expect(both.server.serverURI == "from-file:1")
        let onlyInline = try XDSBootstrap.fromEnvironment(["GRPC_XDS_BOOTSTRAP_CONFIG": inline])
        #expect(onlyInline.server.serverURI == "inline:1")
    }

    @Test("no variable, a missing file, a directory, an oversized inline config: the variable is named")
    func environmentFailures() throws {
        #expect(throws: XDSBootstrapError.self) { _ = try XDSBootstrap.fromEnvironment([:]) }
        for (environment, field) in [
            ([String: String](), "GRPC_XDS_BOOTSTRAP"),
            (["GRPC_XDS_BOOTSTRAP": "/nonexistent/xds.json"], "GRPC_XDS_BOOTSTRAP"),
            (["GRPC_XDS_BOOTSTRAP": "/"], "GRPC_XDS_BOOTSTRAP"),
            (
                ["GRPC_XDS_BOOTSTRAP_CONFIG": String(repeating: " ", count: XDSBootstrap.maximumBytes + 1)],
                "GRPC_XDS_BOOTSTRAP_CONFIG"
            ),
        ] {
            do {
                _ = try XDSBootstrap.fromEnvironment(environment)
                Issue.record("accepted \(environment.keys)")
            } catch {
                #expect(error.field == field)
            }
        }
    }

    @Test("a file over 1 MiB is refused without being parsed")
    func oversizedFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("xds-big-\(UUID()).json").path
        try Data(repeating: 0x20, count: XDSBootstrap.maximumBytes + 1).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            _ = try XDSBootstrap.fromEnvironment(["GRPC_XDS_BOOTSTRAP": path])
            Issue.record("accepted an oversized file")
        } catch {
            #expect(error.field == "GRPC_XDS_BOOTSTRAP")
        }
    }
}
