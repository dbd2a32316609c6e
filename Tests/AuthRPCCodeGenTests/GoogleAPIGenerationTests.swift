import Foundation
import TestSupport
import Testing

/// What protoc-gen-authrpc-swift makes of Google's API annotations (routing, pages, long-running
/// operations, service configs) and of names that would break the generated Swift; protoc and
/// the built plugin over test protos, swiftc over the output where it must compile.
@Suite("protoc-gen-authrpc-swift: Google APIs and hard names")
struct GoogleAPIGenerationTests {
    static let library = """
        syntax = "proto3";
        package acme.library.v1;

        import "google/api/annotations.proto";
        import "google/api/client.proto";
        import "google/api/routing.proto";
        import "google/longrunning/operations_proto.proto";

        message Shelf { string name = 1; }
        message GetShelfRequest { string name = 1; }
        message UpdateShelfRequest { Shelf shelf = 1; string etag = 2; }
        message MoveRequest { string name = 1; string destination = 2; }
        message NumberRequest { int64 shelf_id = 1; uint32 book_id = 2; }
        message TableRequest { string table_name = 1; string app_profile_id = 2; }
        message ListShelvesRequest { string parent = 1; int32 page_size = 2; string page_token = 3; }
        message ListShelvesResponse { repeated Shelf shelves = 1; string next_page_token = 2; repeated string unreachable = 3; }
        message ListNamesRequest { int32 max_results = 1; string page_token = 2; }
        message ListNamesResponse { map<string, string> labels = 1; repeated string names = 2; string next_page_token = 3; }
        message ListBlobsRequest { int32 page_size = 1; string page_token = 2; }
        message ListBlobsResponse { repeated bytes blobs = 1; string next_page_token = 2; }
        message NotAListRequest { string page_token = 1; }
        message ArchiveMetadata { int32 percent = 1; }

        service Library {
          option (google.api.default_host) = "library.example.com";
          option (google.api.oauth_scopes) = "https://www.googleapis.com/auth/cloud-platform,https://www.googleapis.com/auth/library.read";

          rpc GetShelf(GetShelfRequest) returns (Shelf) {
            option (google.api.http) = { get: "/v1/{name=shelves/*}" };
          }
          rpc UpdateShelf(UpdateShelfRequest) returns (Shelf) {
            option (google.api.http) = {
              patch: "/v1/{shelf.name=shelves/*}" body: "shelf"
              additional_bindings { patch: "/v1/{shelf.name=libraries/*/shelves/*}" body: "shelf" }
            };
          }
          rpc Move(MoveRequest) returns (Shelf) {
            option (google.api.http) = {
              post: "/v1/{name=shelves/*}:move" body: "*"
              additional_bindings { post: "/v1/{destination=shelves/*}:receive" body: "*" }
            };
          }
          rpc ByNumber(NumberRequest) returns (Shelf) {
            option (google.api.http) = { get: "/v1/shelves/{shelf_id}/books/{book_id}" };
          }
          rpc ReadTable(TableRequest) returns (Shelf) {
            option (google.api.http) = { get: "/v1/{table_name=**}" };
            option (google.api.routing) = {
              routing_parameters { field: "table_name" path_template: "{routing_id=projects/*}/**" }
              routing_parameters { field: "app_profile_id" }
            };
          }
          rpc Unrouted(TableRequest) returns (Shelf) {
            option (google.api.http) = { get: "/v1/{table_name=**}" };
            option (google.api.routing) = {};
          }
          rpc Plain(TableRequest) returns (Shelf);
          rpc ListShelves(ListShelvesRequest) returns (ListShelvesResponse);
          rpc ListNames(ListNamesRequest) returns (ListNamesResponse);
          rpc ListBlobs(ListBlobsRequest) returns (ListBlobsResponse);
          rpc NotAList(NotAListRequest) returns (ListShelvesResponse);
          rpc Archive(GetShelfRequest) returns (google.longrunning.Operation) {
            option (google.longrunning.operation_info) = { response_type: "Shelf" metadata_type: "ArchiveMetadata" };
          }
          rpc ArchiveEmpty(GetShelfRequest) returns (google.longrunning.Operation) {
            option (google.longrunning.operation_info) = {
              response_type: "google.protobuf.Empty" metadata_type: "acme.library.v1.ArchiveMetadata"
            };
          }
        }
        """

    static let mappings: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("mappings-\(UUID().uuidString).asciipb")
        try! """
        mapping { module_name: "AuthRPC" proto_file_path: "google/rpc/status.proto" }
        mapping { module_name: "GoogleAPICore" proto_file_path: "google/longrunning/operations_proto.proto" }
        """.write(to: url, atomically: true, encoding: .utf8)
        return url
    }()

    /// The generated client of `proto` (named `acme/library.proto`).
    static func client(
        _ proto: String = library,
        options: [String] = ["ProtoPathModuleMappings=\(mappings.path)"]
    ) async throws -> String {
        let output = try await Protoc.run(["acme/library.proto": proto], options: options)
        try #require(output.status == 0, "protoc failed: \(output.stderr)")
        return try #require(output.files["acme/library.authrpc.swift"])
    }

    /// protoc's error for `proto`.
    static func failure(_ proto: String, options: [String] = []) async throws -> String {
        let output = try await Protoc.run(["acme/library.proto": proto], options: options)
        #expect(output.status != 0, "protoc succeeded")
        return output.stderr
    }

    /// A one-service proto whose method carries `annotation`.
    static func annotated(
        _ annotation: String,
        request: String = "message Req { string name = 1; bool flag = 2; Inner inner = 3; repeated string names = 4; }"
    ) -> String {
        """
        syntax = "proto3";
        package acme.v1;
        import "google/api/annotations.proto";
        import "google/api/routing.proto";
        import "google/longrunning/operations_proto.proto";
        message Inner { string id = 1; }
        \(request)
        message ExportMetadata {}
        service S { rpc M(Req) returns (Req) { \(annotation) } }
        service L { rpc Export(Req) returns (google.longrunning.Operation) { \(annotation) } }
        """
    }

    // MARK: - Routing headers

    @Test("google.api.routing becomes a RoutingRule of its parameters, templates checked and compiled once")
    func explicitRouting() async throws {
        let source = try await Self.client()
        #expect(
            source.contains(
                """
                        static let readTable = GoogleAPICore.RoutingRule<Acme_Library_V1_TableRequest>([
                            GoogleAPICore.RoutingParameter(field: "table_name", pathTemplate: try! GoogleAPICore.RoutingPathTemplate("{routing_id=projects/*}/**")) { $0.tableName },
                            GoogleAPICore.RoutingParameter(field: "app_profile_id") { $0.appProfileID },
                        ])
                """
            )
        )
        #expect(source.contains("    private enum Routing {"))
        #expect(
            source.contains(
                "options.addGoogleAPIMetadata(requestParams: Routing.readTable.requestParams(for: request))"
            )
        )
        #expect(source.contains("/// Sends `x-goog-request-params` from `table_name`, `app_profile_id` (AIP-4222)"))
    }

    @Test(
        "Without google.api.routing, the variables of every google.api.http binding, each once: nested fields, verbs, numbers"
    )
    func implicitRouting() async throws {
        let source = try await Self.client()
        #expect(source.contains("/// `GetShelf`: from the variables of its `google.api.http` path."))
        #expect(source.contains("GoogleAPICore.RoutingParameter(field: \"name\") { $0.name },"))
        #expect(
            source.contains(
                """
                        static let updateShelf = GoogleAPICore.RoutingRule<Acme_Library_V1_UpdateShelfRequest>([
                            GoogleAPICore.RoutingParameter(field: "shelf.name") { $0.shelf.name },
                        ])
                """
            )
        )
        #expect(
            source.contains(
                """
                            GoogleAPICore.RoutingParameter(field: "name") { $0.name },
                            GoogleAPICore.RoutingParameter(field: "destination") { $0.destination },
                """
            )
        )
        #expect(
            source.contains(
                "GoogleAPICore.RoutingParameter(field: \"shelf_id\") { $0.shelfID == 0 ? \"\" : Swift.String($0.shelfID) },"
            )
        )
    }

    @Test("An empty google.api.routing turns routing off; a Google API's other methods still send x-goog-api-client")
    func noRouting() async throws {
        let source = try await Self.client()
        #expect(!source.contains("static let unrouted = GoogleAPICore.RoutingRule"))
        #expect(!source.contains("static let plain = GoogleAPICore.RoutingRule"))
        let unrouted = try #require(source.range(of: "func unrouted(")).upperBound
        #expect(source[unrouted...].prefix(600).contains("options.addGoogleAPIMetadata(requestParams: nil)"))
    }

    @Test("A service that is not a Google API (no default_host) sends routing headers but no x-goog-api-client")
    func notGoogle() async throws {
        let source = try await Self.client(
            Self.annotated("option (google.api.http) = { get: \"/v1/{name=things/*}\" };")
        )
        #expect(
            source.contains(
                "options.addGoogleAPIMetadata(requestParams: Routing.m.requestParams(for: request), apiClient: nil)"
            )
        )
        #expect(!source.contains("static let defaultHost"))
        let plain = try await Self.client(Self.annotated(""))
        #expect(!plain.contains("addGoogleAPIMetadata"))
        #expect(plain.contains("        try await channel.unary(Methods.m, request: request"))
    }

    @Test(
        "Annotations the generator cannot honour stop it with the file, the method and what is wrong",
        arguments: [
            (
                "option (google.api.routing) = { routing_parameters { field: \"name\" path_template: \"{a}/{b}\" } };",
                "acme.v1.S.M: google.api.routing has a bad path_template: path template \"{a}/{b}\" at offset 0: a routing template names exactly one variable"
            ),
            (
                "option (google.api.routing) = { routing_parameters { field: \"nope\" } };",
                "acme.v1.S.M: the request acme.v1.Req has no field nope"
            ),
            (
                "option (google.api.routing) = { routing_parameters { field: \"flag\" } };",
                "acme.v1.S.M: flag is a bool field; routing fields are strings"
            ),
            (
                "option (google.api.routing) = { routing_parameters { field: \"names\" } };",
                "names is a repeated field or a map"
            ),
            (
                "option (google.api.routing) = { routing_parameters { field: \"name.id\" } };",
                "name.id goes through name, which is not a message"
            ),
            (
                "option (google.api.http) = { get: \"v1/{name}\" };",
                "google.api.http has a path that does not parse: path template \"v1/{name}\" at offset 0: an http path starts with \"/\""
            ),
            (
                "option (google.api.http) = { get: \"/v1/{inner.id=**}/{name=**}\" };",
                "\"**\" appears more than once"
            ),
        ]
    )
    func badAnnotations(annotation: String, message: String) async throws {
        let stderr = try await Self.failure(Self.annotated(annotation))
        #expect(stderr.contains("acme/library.proto: "))
        #expect(stderr.contains(message), "\(stderr)")
    }

    // MARK: - Pages

    @Test("AIP-158 list methods get Pages and Items that follow next_page_token over the first repeated field")
    func pages() async throws {
        let source = try await Self.client()
        #expect(
            source.contains(
                "public func listShelvesPages(_ request: Acme_Library_V1_ListShelvesRequest, options: AuthRPC.CallOptions? = nil) -> GoogleAPICore.PageSequence<Acme_Library_V1_ListShelvesRequest, Acme_Library_V1_ListShelvesResponse, Acme_Library_V1_Shelf> {"
            ) || source.contains("func listShelvesPages(_ request: Acme_Library_V1_ListShelvesRequest")
        )
        #expect(source.contains("                try await self.listShelves(request, options: options).message"))
        #expect(source.contains("            setPageToken: { $0.pageToken = $1 },"))
        #expect(source.contains("            items: { $0.shelves }"))
        #expect(
            source.contains(
                "func listShelvesItems(_ request: Acme_Library_V1_ListShelvesRequest, options: AuthRPC.CallOptions? = nil) -> GoogleAPICore.PageItemSequence<Acme_Library_V1_ListShelvesRequest, Acme_Library_V1_ListShelvesResponse, Acme_Library_V1_Shelf> {"
            )
        )
        // max_results counts as the page size; a map before the items is not the items.
        #expect(
            source.contains(
                "GoogleAPICore.PageSequence<Acme_Library_V1_ListNamesRequest, Acme_Library_V1_ListNamesResponse, Swift.String>"
            )
        )
        #expect(source.contains("            items: { $0.names }"))
        // bytes items are Foundation's Data, and the file imports Foundation.
        #expect(
            source.contains(
                "GoogleAPICore.PageSequence<Acme_Library_V1_ListBlobsRequest, Acme_Library_V1_ListBlobsResponse, Foundation.Data>"
            )
        )
        #expect(source.contains("\nimport Foundation\n"))
        // No page size: not a list method.
        #expect(!source.contains("notAListPages"))
    }

    // MARK: - Long-running operations

    @Test("Methods returning an Operation with operation_info get a typed LongRunningOperation from GoogleAPICore")
    func operations() async throws {
        let source = try await Self.client()
        #expect(source.contains("\nimport GoogleAPICore\n"))
        #expect(
            source.contains(
                "nonisolated(nonsending) func archiveOperation(_ request: Acme_Library_V1_GetShelfRequest, options: AuthRPC.CallOptions? = nil) async throws(AuthRPC.RPCError) -> GoogleAPICore.LongRunningOperation<Acme_Library_V1_Shelf, Acme_Library_V1_ArchiveMetadata> {"
            )
        )
        #expect(
            source.contains(
                "GoogleAPICore.LongRunningOperation<SwiftProtobuf.Google_Protobuf_Empty, Acme_Library_V1_ArchiveMetadata>"
            )
        )
        #expect(
            source.contains("operations: GoogleAPICore.Google_Longrunning_OperationsClient(channel: channel),")
        )
    }

    @Test("Without operations_proto.proto mapped to GoogleAPICore, the method says how to get the helper")
    func operationsUnmapped() async throws {
        let source = try await Self.client(options: [])
        #expect(!source.contains("archiveOperation"))
        #expect(
            source.contains(
                "/// Returns a long-running operation; map google/longrunning/operations_proto.proto to GoogleAPICore (ProtoPathModuleMappings) for a typed `LongRunningOperation`."
            )
        )
    }

    @Test("operation_info that names no message, or leaves one out, stops generation")
    func badOperationInfo() async throws {
        let missing = try await Self.failure(
            Self.annotated(
                "option (google.longrunning.operation_info) = { response_type: \"Nope\" metadata_type: \"ExportMetadata\" };"
            )
        )
        #expect(
            missing.contains(
                "acme.v1.L.Export: google.longrunning.operation_info names Nope, which is not a message in acme/library.proto or the files it imports"
            )
        )
        let half = try await Self.failure(
            Self.annotated("option (google.longrunning.operation_info) = { response_type: \"Req\" };")
        )
        #expect(half.contains("must name both response_type and metadata_type (AIP-151)"))
    }

    // MARK: - Service facts

    @Test("google.api.default_host and google.api.oauth_scopes become defaultHost and oauthScopes")
    func serviceFacts() async throws {
        let source = try await Self.client()
        #expect(source.contains("    static let defaultHost = \"library.example.com\"\n"))
        #expect(
            source.contains(
                "    static let oauthScopes: [Swift.String] = [\"https://www.googleapis.com/auth/cloud-platform\", \"https://www.googleapis.com/auth/library.read\"]\n"
            )
        )
    }

    // MARK: - Service configs

    static func writeConfig(_ text: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("config-\(UUID().uuidString).json")
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    @Test("ServiceConfig embeds the file's text, unchanged, in the clients of the services it names")
    func serviceConfig() async throws {
        let text = """
            {"methodConfig": [{"name": [{"service": "acme.library.v1.Library", "method": "GetShelf"}],
              "timeout": "1.5s", "waitForReady": true,
              "retryPolicy": {"maxAttempts": 4, "initialBackoff": "0.1s", "maxBackoff": "1s", "backoffMultiplier": 2,
                "retryableStatusCodes": ["UNAVAILABLE", 4]}}],
             "note": "a \\\\ backslash and \\"quotes\\" \\"\\"\\"",\t"trailing": "spaces"}   \n
            """
        let config = try Self.writeConfig(text)
        defer { try? FileManager.default.removeItem(at: config) }
        let source = try await Self.client(options: ["ServiceConfig=\(config.path)"])
        let start = try #require(source.range(of: "    static let serviceConfigJSON: Swift.String = \"\"\"\n"))
        #expect(source.contains("/// publishes for its methods, embedded from `\(config.lastPathComponent)`."))
        let end = try #require(source.range(of: "\n    \"\"\"\n", range: start.upperBound..<source.endIndex))
        // The literal, compiled, must give back the file's text byte for byte.
        let literal = "let text = \"\"\"\n" + source[start.upperBound..<end.lowerBound] + "\n    \"\"\"\n"
        let check = """
            \(literal.replacingOccurrences(of: "\n    ", with: "\n"))
            precondition(text == \(swiftLiteral(text)), "embedded text differs")
            """
        let ran = try await Protoc.execute(check)
        #expect(ran.status == 0, "\(ran.output)")
        // A service the file does not name gets nothing.
        let other = try await Self.client(Self.annotated(""), options: ["ServiceConfig=\(config.path)"])
        #expect(!other.contains("serviceConfigJSON"))
    }

    @Test(
        "A service config that gRPC would refuse stops generation with the file and the place",
        arguments: [
            ("{", "is not JSON"),
            ("[]", "is not a valid service config: must be a JSON object, not an array"),
            (#"{"methodConfig": {}}"#, "is not a valid service config: methodConfig: must be a JSON array"),
            (
                #"{"methodConfig": [{"name": []}]}"#,
                "is not a valid service config: methodConfig[0].name: must be a non-empty array"
            ),
            (
                #"{"methodConfig": [{"name": [{"method": "M"}]}]}"#,
                "is not a valid service config: methodConfig[0].name[0].method: a method needs its service"
            ),
            (
                #"{"methodConfig": [{"name": [{"service": "S", "verb": "M"}]}]}"#,
                "methodConfig[0].name[0]: has an unknown key \"verb\""
            ),
            (
                #"{"methodConfig": [{"name": [{"service": "S"}]}, {"name": [{"service": "S"}]}]}"#,
                "is not a valid service config: methodConfig[1].name[0]: S/* appears twice"
            ),
            (
                #"{"methodConfig": [{"name": [{"service": "S"}], "timeout": "1m"}]}"#,
                "is not a valid service config: methodConfig[0].timeout: must be a duration such as \"1.5s\""
            ),
            (
                #"{"methodConfig": [{"name": [{"service": "S"}], "timeout": "1.0000000001s"}]}"#,
                "methodConfig[0].timeout: must be a duration such as \"1.5s\" (seconds, up to nine fractional digits, then s), not \"1.0000000001s\""
            ),
            (
                #"{"methodConfig": [{"name": [{"service": "S"}], "waitForReady": 1}]}"#,
                "methodConfig[0].waitForReady: must be true or false, not the number 1.0"
            ),
            (
                #"{"methodConfig": [{"name": [{"service": "S"}], "retryPolicy": {"maxAttempts": 1, "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#,
                "is not a valid service config: methodConfig[0].retryPolicy.maxAttempts: must be an integer from 2 to"
            ),
            (
                #"{"methodConfig": [{"name": [{"service": "S"}], "retryPolicy": {"maxAttempts": 3, "initialBackoff": "0s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#,
                "methodConfig[0].retryPolicy.initialBackoff: must be longer than zero"
            ),
            (
                #"{"methodConfig": [{"name": [{"service": "S"}], "retryPolicy": {"maxAttempts": 3, "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": true, "retryableStatusCodes": ["UNAVAILABLE"]}}]}"#,
                "methodConfig[0].retryPolicy.backoffMultiplier: must be a number, not true"
            ),
            (
                #"{"methodConfig": [{"name": [{"service": "S"}], "retryPolicy": {"maxAttempts": 3, "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE", "SLOW"]}}]}"#,
                "methodConfig[0].retryPolicy.retryableStatusCodes[1]: must be a status code other than OK, by name (\"UNAVAILABLE\") or number (14), not the string \"SLOW\""
            ),
            (
                #"{"methodConfig": [{"name": [{"service": "S"}], "retryPolicy": {"maxAttempts": 3, "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": []}}]}"#,
                "methodConfig[0].retryPolicy.retryableStatusCodes: must not be empty"
            ),
            (
                #"{"methodConfig": [{"name": [{"service": "S"}], "retryPolicy": {}, "hedgingPolicy": {}}]}"#,
                "methodConfig[0].hedgingPolicy: only one of retryPolicy and hedgingPolicy may be set"
            ),
        ]
    )
    func badServiceConfig(text: String, problem: String) async throws {
        let config = try Self.writeConfig(text)
        defer { try? FileManager.default.removeItem(at: config) }
        let stderr = try await Self.failure(Self.annotated(""), options: ["ServiceConfig=\(config.path)"])
        #expect(stderr.contains("ServiceConfig=\(config.path) "), "\(stderr)")
        #expect(stderr.contains(problem), "\(stderr)")
    }

    @Test("A missing file, and two files for one service, are refused too")
    func serviceConfigFiles() async throws {
        let missing = try await Self.failure(Self.annotated(""), options: ["ServiceConfig=/nonexistent/config.json"])
        #expect(missing.contains("cannot read ServiceConfig=/nonexistent/config.json"))
        let first = try Self.writeConfig(#"{"methodConfig": [{"name": [{"service": "acme.v1.S"}], "timeout": "1s"}]}"#)
        let second = try Self.writeConfig(#"{"methodConfig": [{"name": [{"service": "acme.v1.S", "method": "M"}]}]}"#)
        defer {
            try? FileManager.default.removeItem(at: first)
            try? FileManager.default.removeItem(at: second)
        }
        let twice = try await Self.failure(
            Self.annotated(""),
            options: ["ServiceConfig=\(first.path)", "ServiceConfig=\(second.path)"]
        )
        #expect(
            twice.contains("acme.v1.S is configured by more than one ServiceConfig (\(first.path), \(second.path))")
        )
    }

    // MARK: - Hard names

    /// A package-less file whose messages and enums have the names of AuthRPC's types.
    static let hardNames = """
        syntax = "proto3";
        import "google/api/annotations.proto";
        message Channel { string name = 1; }
        message RPCError { string text = 1; }
        message CallOptions { int32 page_size = 1; string page_token = 2; }
        message UnaryResponse { repeated Channel channels = 1; string next_page_token = 2; }
        message MethodDescriptor {}
        message RoutingRule {}
        message PageSequence {}
        enum Metadata { METADATA_UNSPECIFIED = 0; }
        service Edge {
          rpc _(Channel) returns (RPCError) { option (google.api.http) = { get: "/v1/{name=*}" }; }
          rpc __(Channel) returns (RPCError);
          rpc List(CallOptions) returns (UnaryResponse);
          rpc Describe(MethodDescriptor) returns (Channel);
        }
        """

    @Test(
        "Messages named like AuthRPC's types, and rpc `_`, compile: library types are module-qualified, `_` becomes `_method`"
    )
    func hardNamesCompile() async throws {
        let output = try await Protoc.run(["edge.proto": Self.hardNames], generate: ["edge.proto"], messages: true)
        try #require(output.status == 0, "protoc failed: \(output.stderr)")
        let client = try #require(output.files["edge.authrpc.swift"])
        #expect(client.contains("static let _method = AuthRPC.MethodDescriptor(service: \"Edge\", method: \"_\")"))
        #expect(client.contains("func __method(_ request: Channel, options: AuthRPC.CallOptions? = nil)"))
        let compiled = try await Protoc.typecheck(output.files)
        #expect(compiled.status == 0, "\(compiled.output)")
    }

    @Test("A type named like a member type of the client (Methods) is refused; it would be hidden inside the client")
    func shadowedTypes() async throws {
        let stderr = try await Self.failure(
            "syntax = \"proto3\";\nmessage Methods {}\nservice S { rpc M(Methods) returns (Methods); }\n"
        )
        #expect(
            stderr.contains(
                "acme/library.proto: the type 'Methods' has the name of a member of SClient, which would hide it there"
            )
        )
    }

    @Test(
        "The name check covers enums, module names and the other files of the request",
        arguments: [
            (
                "syntax = \"proto3\";\npackage acme;\nenum FooClient { A = 0; }\nmessage M {}\nservice Foo { rpc A(M) returns (M); }\n",
                "'Acme_FooClient' would be declared twice"
            ),
            (
                "syntax = \"proto3\";\nmessage AuthRPC {}\nservice Foo { rpc A(AuthRPC) returns (AuthRPC); }\n",
                "'AuthRPC' would be declared twice"
            ),
        ]
    )
    func collisions(proto: String, message: String) async throws {
        #expect(try await Self.failure(proto).contains(message))
    }

    @Test("A client named like a message of another file in the same request is refused")
    func crossFileCollision() async throws {
        let output = try await Protoc.run(
            [
                "a.proto": "syntax = \"proto3\";\npackage acme;\nmessage M {}\nservice Foo { rpc A(M) returns (M); }\n",
                "b.proto": "syntax = \"proto3\";\npackage acme;\nmessage FooClient {}\n",
            ]
        )
        #expect(output.status != 0)
        #expect(output.stderr.contains("a.proto: 'Acme_FooClient' would be declared twice"))
    }

    @Test("Control characters in a file's name are escaped in the generated comments and in errors")
    func controlCharactersInFileNames() async throws {
        let name = "acme/evil\nstruct Injected {}\u{1B}[2J.proto"
        let output = try await Protoc.run(
            [name: "syntax = \"proto3\";\npackage acme;\nmessage M {}\nservice S { rpc A(M) returns (M); }\n"],
            options: ["FileNaming=DropPath"]
        )
        try #require(output.status == 0, "protoc failed: \(output.stderr)")
        let source = try #require(output.files.values.first)
        #expect(source.contains("// Source: acme/evil\\u{A}struct Injected {}\\u{1B}[2J.proto\n"))
        #expect(!source.contains("\nstruct Injected"))
    }
}

/// `text` as a Swift string literal, every scalar outside printable ASCII escaped.
private func swiftLiteral(_ text: String) -> String {
    var result = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": result += "\\\""
        case "\\": result += "\\\\"
        case " "..."~": result.unicodeScalars.append(scalar)
        default: result += "\\u{\(String(scalar.value, radix: 16))}"
        }
    }
    return result + "\""
}
