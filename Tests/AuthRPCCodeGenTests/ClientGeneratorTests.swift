import AuthRPCCodeGen
import Foundation
import TestSupport
import Testing

/// protoc-gen-authrpc-swift as protoc runs it: the built plugin, Debian's protoc, a fixture proto.
@Suite("protoc-gen-authrpc-swift")
struct ClientGeneratorTests {
    static let fixture = """
        // The fixture's header.
        syntax = "proto3";

        package acme.widgets.v1;

        import "google/protobuf/empty.proto";

        message Widget { string name = 1; }
        message Nothing {}

        // Makes and watches widgets.
        service Widgets {
          // Makes a widget.
          rpc MakeWidget(Widget) returns (Widget);
          // Old way to make one.
          rpc LegacyMake(Widget) returns (Widget) { option deprecated = true; }
          rpc Ping(Nothing) returns (google.protobuf.Empty);
          rpc Import(Widget) returns (Widget);
          rpc Channel(Widget) returns (Widget);
          rpc Watch(Widget) returns (stream Widget);
          rpc Upload(stream Widget) returns (Widget);
          rpc Chat(stream Widget) returns (stream Widget);
        }

        service Retired {
          option deprecated = true;
          rpc Stop(Widget) returns (Widget);
        }

        // Only streams.
        service Streams {
          rpc Follow(Widget) returns (stream Widget);
        }
        """

    /// Runs protoc with the built plugin over `proto` (named `acme/widgets.proto`), with `options`.
    /// Returns protoc's exit status, the generated files by name, and protoc's standard error.
    static func generate(
        _ proto: String = fixture,
        options: [String] = [],
        otherFiles: [String: String] = [:]
    ) async throws -> (status: Int32, files: [String: String], stderr: String) {
        var files = ["acme/widgets.proto": proto]
        for (name, text) in otherFiles { files["acme/\(name)"] = text }
        let output = try await Protoc.run(files, generate: ["acme/widgets.proto"], options: options)
        return (output.status, output.files, output.stderr)
    }

    static func generatedSource(options: [String] = []) async throws -> String {
        let result = try await generate(options: options)
        try #require(result.status == 0, "protoc failed: \(result.stderr)")
        return try #require(result.files.values.first)
    }

    @Test(
        "A client per service, named like swift-protobuf's types, with a descriptor and an async throws(RPCError) method per unary RPC that runs on the caller's executor"
    )
    func clientShape() async throws {
        let source = try await Self.generatedSource(options: ["Visibility=Public"])
        #expect(source.contains("public struct Acme_Widgets_V1_WidgetsClient: Swift.Sendable {"))
        #expect(source.contains("public static let serviceName = \"acme.widgets.v1.Widgets\""))
        #expect(
            source.contains(
                "public static let makeWidget = AuthRPC.MethodDescriptor(service: \"acme.widgets.v1.Widgets\", method: \"MakeWidget\")"
            )
        )
        #expect(
            source.contains(
                "    nonisolated(nonsending) public func makeWidget(_ request: Acme_Widgets_V1_Widget, options: AuthRPC.CallOptions? = nil) async throws(AuthRPC.RPCError) -> AuthRPC.UnaryResponse<Acme_Widgets_V1_Widget> {"
            )
        )
        #expect(
            source.contains(
                "try await channel.unary(Methods.makeWidget, request: request, responseType: Acme_Widgets_V1_Widget.self, options: options)"
            )
        )
        #expect(source.contains("public init(channel: AuthRPC.Channel) {"))
        #expect(source.contains("import AuthRPC\nimport SwiftProtobuf\n"))
    }

    @Test("Proto comments become DocC; the file's header comes along")
    func comments() async throws {
        let source = try await Self.generatedSource()
        #expect(source.contains("/// Makes and watches widgets.\n///\n/// Every call goes through ``channel``"))
        #expect(source.contains("    /// Makes a widget.\n    ///\n    /// - Parameters:"))
        #expect(source.contains("/// The fixture's header."))
        #expect(source.contains("/// A typed client for `acme.widgets.v1.Retired`."))
    }

    @Test("option deprecated marks the method (and its descriptor) or the whole client @available(*, deprecated)")
    func deprecation() async throws {
        let source = try await Self.generatedSource()
        #expect(source.contains("    @available(*, deprecated)\n    nonisolated(nonsending) func legacyMake("))
        #expect(source.contains("        @available(*, deprecated)\n        static let legacyMake ="))
        #expect(source.contains("@available(*, deprecated)\nstruct Acme_Widgets_V1_RetiredClient: Swift.Sendable {"))
        #expect(!source.contains("@available(*, deprecated)\n    nonisolated(nonsending) func makeWidget("))
    }

    @Test(
        "Streaming methods are left out and listed on the client's DocC; a service of streams alone still gets a client"
    )
    func streaming() async throws {
        let source = try await Self.generatedSource()
        #expect(
            source.contains(
                "/// Not generated: `Watch` (server streaming), `Upload` (client streaming), `Chat` (bidirectional streaming)."
            )
        )
        #expect(!source.contains("func watch("))
        #expect(!source.contains("func upload("))
        #expect(!source.contains("static let chat"))
        #expect(source.contains("struct Acme_Widgets_V1_StreamsClient: Swift.Sendable {"))
        #expect(source.contains("/// Not generated: `Follow` (server streaming)."))
    }

    @Test("Empty requests default to an empty message; keywords are quoted; members the client has get an underscore")
    func names() async throws {
        let source = try await Self.generatedSource()
        #expect(
            source.contains(
                "func ping(_ request: Acme_Widgets_V1_Nothing = Acme_Widgets_V1_Nothing(), options: AuthRPC.CallOptions? = nil) async throws(AuthRPC.RPCError) -> AuthRPC.UnaryResponse<SwiftProtobuf.Google_Protobuf_Empty>"
            )
        )
        #expect(source.contains("func `import`(_ request: Acme_Widgets_V1_Widget, options"))
        #expect(source.contains("func channel_(_ request: Acme_Widgets_V1_Widget, options"))
    }

    @Test("Visibility: internal by default, public or package on request")
    func visibility() async throws {
        #expect(try await Self.generatedSource().contains("\nstruct Acme_Widgets_V1_WidgetsClient: Swift.Sendable {"))
        #expect(try await Self.generatedSource(options: ["Visibility=Package"]).contains("package func makeWidget("))
    }

    @Test("UseAccessLevelOnImports writes each import with the generated code's access level, as protoc-gen-swift does")
    func accessLevelOnImports() async throws {
        #expect(try await Self.generatedSource().contains("\nimport AuthRPC\n"))
        #expect(
            try await Self.generatedSource(options: ["Visibility=Public", "UseAccessLevelOnImports=true"]).contains(
                "\npublic import AuthRPC\n"
            )
        )
        #expect(
            try await Self.generatedSource(options: ["Visibility=Package", "UseAccessLevelOnImports=true"]).contains(
                "\npackage import AuthRPC\n"
            )
        )
        #expect(
            try await Self.generatedSource(options: ["UseAccessLevelOnImports=true"]).contains(
                "\ninternal import AuthRPC\n"
            )
        )
        #expect(
            try await Self.generatedSource(options: ["Visibility=Public", "UseAccessLevelOnImports=false"]).contains(
                "\nimport AuthRPC\n"
            )
        )
    }

    @Test("FileNaming places the output like protoc-gen-swift does")
    func fileNaming() async throws {
        #expect(try await Self.generate(options: []).files.keys.sorted() == ["acme/widgets.authrpc.swift"])
        #expect(
            try await Self.generate(options: ["FileNaming=PathToUnderscores"]).files.keys.sorted() == [
                "acme_widgets.authrpc.swift"
            ]
        )
        #expect(
            try await Self.generate(options: ["FileNaming=DropPath"]).files.keys.sorted() == ["widgets.authrpc.swift"]
        )
    }

    @Test("ProtoPathModuleMappings qualifies types from another module and imports it")
    func moduleMappings() async throws {
        let mappings = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mappings-\(UUID().uuidString).asciipb"
        )
        defer { try? FileManager.default.removeItem(at: mappings) }
        try "mapping { module_name: \"AcmeTypes\" proto_file_path: \"acme/types.proto\" }\n"
            .write(to: mappings, atomically: true, encoding: .utf8)
        let types = "syntax = \"proto3\";\npackage acme.types;\nmessage Part { string id = 1; }\n"
        let service = """
            syntax = "proto3";
            package acme;
            import "acme/types.proto";
            message Local { string id = 1; }
            service Parts { rpc Find(Local) returns (acme.types.Part); }
            """
        let result = try await Self.generate(
            service,
            options: ["ProtoPathModuleMappings=\(mappings.path)"],
            otherFiles: ["types.proto": types]
        )
        try #require(result.status == 0, "protoc failed: \(result.stderr)")
        let source = try #require(result.files["acme/widgets.authrpc.swift"])
        #expect(source.contains("import AcmeTypes\nimport AuthRPC\n"))
        #expect(
            source.contains(
                "func find(_ request: Acme_Local, options: AuthRPC.CallOptions? = nil) async throws(AuthRPC.RPCError) -> AuthRPC.UnaryResponse<AcmeTypes.Acme_Types_Part>"
            )
        )
        #expect(!source.contains("import SwiftProtobuf"))
    }

    @Test("A file without services gets a header-only file, so build tools can count on one output per .proto")
    func noServices() async throws {
        let result = try await Self.generate("syntax = \"proto3\";\npackage acme;\nmessage Only {}\n")
        #expect(result.status == 0)
        let source = try #require(result.files["acme/widgets.authrpc.swift"])
        #expect(source.contains("This file declares no services"))
        #expect(!source.contains("import AuthRPC"))
    }

    @Test("Unknown parameters and values fail with a message that lists what is accepted")
    func badParameters() async throws {
        let unknown = try await Self.generate(options: ["Visiblity=Public"])
        #expect(unknown.status != 0)
        #expect(
            unknown.stderr.contains(
                "unknown parameter 'Visiblity' (known: Visibility, FileNaming, ProtoPathModuleMappings, UseAccessLevelOnImports, ServiceConfig)"
            )
        )
        let badValue = try await Self.generate(options: ["Visibility=Open"])
        #expect(badValue.status != 0)
        #expect(badValue.stderr.contains("parameter 'Visibility' cannot be 'Open' (one of: Internal, Public, Package)"))
        let badFlag = try await Self.generate(options: ["UseAccessLevelOnImports=yes"])
        #expect(badFlag.stderr.contains("parameter 'UseAccessLevelOnImports' cannot be 'yes' (one of: true, false)"))
        let missingMappings = try await Self.generate(options: ["ProtoPathModuleMappings=/nonexistent/mappings.asciipb"]
        )
        #expect(missingMappings.stderr.contains("cannot use ProtoPathModuleMappings=/nonexistent/mappings.asciipb"))
    }

    @Test("Two services that would share a Swift name fail with the option that fixes it")
    func collision() async throws {
        let result = try await Self.generate(
            "syntax = \"proto3\";\npackage acme;\nmessage M {}\nmessage FooClient {}\nservice Foo { rpc A(M) returns (M); }\n"
        )
        #expect(result.status != 0)
        #expect(result.stderr.contains("'Acme_FooClient' would be declared twice"))
    }

    @Test("Output file names for each FileNaming")
    func outputFileNames() {
        #expect(GeneratorOptions.FileNaming.fullPath.outputFileName(for: "a/b/c.proto") == "a/b/c.authrpc.swift")
        #expect(
            GeneratorOptions.FileNaming.pathToUnderscores.outputFileName(for: "a/b/c.proto") == "a_b_c.authrpc.swift"
        )
        #expect(GeneratorOptions.FileNaming.dropPath.outputFileName(for: "a/b/c.proto") == "c.authrpc.swift")
        #expect(GeneratorOptions.FileNaming.pathToUnderscores.outputFileName(for: "top.proto") == "top.authrpc.swift")
    }
}
