import Foundation
import Testing

/// The build plugin's config parser, import scanner and protoc lookup (the plugin's own source
/// files, linked into this test target).
@Suite("AuthRPCGenerator build plugin: config, imports, protoc")
struct GeneratorConfigTests {
    static let path = "/pkg/Sources/Api/authrpc-swift-config.json"

    static func parse(_ json: String) throws(GeneratorConfigError) -> GeneratorConfig {
        try GeneratorConfig(json: Data(json.utf8), path: path)
    }

    static func problem(_ json: String) -> GeneratorConfigError? {
        do {
            _ = try parse(json)
            return nil
        } catch {
            return error
        }
    }

    @Test("An empty object takes the defaults: messages and clients, internal, protoc on PATH")
    func defaults() throws {
        let config = try Self.parse("{}")
        #expect(config.messages && config.clients)
        #expect(config.visibility == "Internal")
        #expect(config.importPaths.isEmpty && config.protocPath == nil && config.moduleMappings == nil)
        #expect(!config.accessLevelOnImports)
    }

    @Test("Every key is read; visibility in any case becomes the generators' spelling")
    func everyKey() throws {
        let config = try Self.parse(
            """
            {"messages": false, "clients": true, "visibility": "PUBLIC", "importPaths": ["../../Protos", "vendor"],
             "protocPath": "/usr/bin/protoc", "moduleMappings": "mappings.asciipb", "accessLevelOnImports": true}
            """
        )
        #expect(
            config
                == {
                    var expected = try! Self.parse("{}")
                    expected.messages = false
                    expected.visibility = "Public"
                    expected.importPaths = ["../../Protos", "vendor"]
                    expected.protocPath = "/usr/bin/protoc"
                    expected.moduleMappings = "mappings.asciipb"
                    expected.accessLevelOnImports = true
                    return expected
                }()
        )
    }

    @Test("An unknown key (a typo) is an error naming the file, the key and the keys there are")
    func unknownKey() {
        let error = Self.problem(#"{"visiblity": "public"}"#)
        #expect(
            error?.description
                == "\(Self.path) has an unknown key \"visiblity\": use only \"messages\", \"clients\", \"visibility\", \"importPaths\", \"protocPath\", \"moduleMappings\", \"accessLevelOnImports\", \"serviceConfigs\""
        )
    }

    @Test("A bad value is an error naming the key and what it may be")
    func badValues() {
        #expect(
            Self.problem(#"{"visibility": "open"}"#)?.description
                == "\(Self.path) has \"visibility\": \"open\": use one of \"internal\", \"public\", \"package\""
        )
        #expect(
            Self.problem(#"{"accessLevelOnImports": "yes"}"#)?.problem
                == "has \"accessLevelOnImports\" that is not true or false"
        )
        #expect(
            Self.problem(#"{"messages": 1}"#)?.description
                == "\(Self.path) has \"messages\" that is not true or false: make \"messages\" true or false"
        )
        #expect(
            Self.problem(#"{"importPaths": "Protos"}"#)?.problem
                == "has \"importPaths\" that is not an array of directory paths"
        )
        #expect(
            Self.problem(#"{"importPaths": [""]}"#)?.problem
                == "has \"importPaths\" that is not an array of directory paths"
        )
        #expect(Self.problem(#"{"protocPath": 7}"#)?.problem == "has \"protocPath\" that is not a path to protoc")
        #expect(
            Self.problem(#"{"messages": false, "clients": false}"#)?.problem
                == "turns off both \"messages\" and \"clients\""
        )
    }

    @Test("Text that is not a JSON object is an error naming the file")
    func notAnObject() {
        for text in ["", "[]", "{\"visibility\": ", "visibility: public"] {
            #expect(
                Self.problem(text)?.description
                    == "\(Self.path) is not a JSON object: write a JSON object such as {\"visibility\": \"public\"}"
            )
        }
    }

    @Test("Imports are read with their line numbers; comments and options are not imports")
    func imports() {
        let source = """
            syntax = "proto3";
            // import "commented/out.proto";
            import "google/api/annotations.proto";
            import public "acme/shared.proto"; // trailing comment
            /* import "in/block.proto";
               import "still/block.proto"; */
            import weak "acme/weak.proto";
            option java_package = "import";
              import   "indented.proto"  ;
            """
        #expect(
            ProtoImports.imports(in: source) == [
                .init(line: 3, path: "google/api/annotations.proto"),
                .init(line: 4, path: "acme/shared.proto"),
                .init(line: 7, path: "acme/weak.proto"),
                .init(line: 9, path: "indented.proto"),
            ]
        )
        #expect(ProtoImports.isWellKnown("google/protobuf/empty.proto"))
        #expect(!ProtoImports.isWellKnown("google/api/annotations.proto"))
    }

    @Test("A `//` comment holding `/*`, and strings holding comment markers, hide no import")
    func importsAfterTrickyComments() {
        let source = """
            syntax = "proto3"; // see /* not a block comment
            import "first.proto";
            option go_package = "example.com/a/*b";
            import "second.proto"; /* a block
            comment */ import weak "third.proto";
            message M { string s = 1 [json_name = "//x"]; }
            import
              "split.proto"
              ;
            /* import "hidden.proto"; */ // import "also-hidden.proto";
            """
        #expect(
            ProtoImports.imports(in: source) == [
                .init(line: 2, path: "first.proto"),
                .init(line: 4, path: "second.proto"),
                .init(line: 5, path: "third.proto"),
                .init(line: 7, path: "split.proto"),
            ]
        )
    }

    @Test("serviceConfigs is a list of paths")
    func serviceConfigs() throws {
        #expect(
            try Self.parse(#"{"serviceConfigs": ["a.json", "dir/b.json"]}"#).serviceConfigs == ["a.json", "dir/b.json"]
        )
        #expect(
            Self.problem(#"{"serviceConfigs": "a.json"}"#)?.problem
                == "has \"serviceConfigs\" that is not an array of paths to service config files"
        )
        #expect(Self.problem(#"{"serviceConfigs": [""]}"#) != nil)
    }

    @Test("protoc's arguments: paths it would split or read as flags are written another way or refused")
    func protocArguments() throws {
        #expect(
            try ProtocArguments.protoPath(URL(fileURLWithPath: "/a/b"), configPath: Self.path, origin: "x")
                == "--proto_path=/a/b"
        )
        #expect(
            try ProtocArguments.protoPath(URL(fileURLWithPath: "/a/k=v"), configPath: Self.path, origin: "x")
                == "--proto_path==/a/k=v"
        )
        #expect(
            throws: GeneratorConfigError(
                path: Self.path,
                problem: "needs the import path /a/b:c as an import path, and protoc splits import paths at \":\"",
                fix: "move or link the directory to a path without \":\""
            )
        ) {
            try ProtocArguments.protoPath(
                URL(fileURLWithPath: "/a/b:c"),
                configPath: Self.path,
                origin: "the import path"
            )
        }
        #expect(ProtocArguments.output("swift", URL(fileURLWithPath: "/out")) == "--swift_out=/out")
        #expect(ProtocArguments.output("swift", URL(fileURLWithPath: "/o:ut")) == "--swift_out=:/o:ut")
        #expect(
            try ProtocArguments.option(
                "swift",
                key: "ProtoPathModuleMappings",
                path: URL(fileURLWithPath: "/m=1.asciipb"),
                configPath: Self.path,
                configKey: "moduleMappings"
            ) == "--swift_opt=ProtoPathModuleMappings=/m=1.asciipb"
        )
        #expect(throws: GeneratorConfigError.self) {
            try ProtocArguments.option(
                "swift",
                key: "ServiceConfig",
                path: URL(fileURLWithPath: "/a,b.json"),
                configPath: Self.path,
                configKey: "serviceConfigs"
            )
        }
        try ProtocArguments.checkProtoName("acme/-x.proto", file: "/p/acme/-x.proto")
        for name in ["-x.proto", "@args.proto", "--help.proto"] {
            #expect(
                throws: GeneratorConfigError(
                    path: "/p/\(name)",
                    problem:
                        "would be passed to protoc as \"\(name)\", which protoc reads as a flag or a file of arguments",
                    fix: "rename it (or the directory it is in) so its path does not start with \"-\" or \"@\""
                )
            ) { try ProtocArguments.checkProtoName(name, file: "/p/\(name)") }
        }
    }

    @Test("The files a module mappings file gives to other modules, comments skipped")
    func moduleMappings() {
        let text = """
            # mapping { module_name: "Old" proto_file_path: "commented/out.proto" }
            mapping {
              module_name: "AuthRPC"
              proto_file_path: "google/rpc/status.proto"  # trailing comment
            }
            mapping { module_name: "Common" proto_file_path: "a.proto" proto_file_path:"b/c.proto" }
            """
        #expect(
            ModuleMappingsScan.protoFilePaths(in: text) == ["google/rpc/status.proto", "a.proto", "b/c.proto"]
        )
    }

    @Test("protoc: the config's path, else PROTOC_PATH, else PATH; each miss says what to do")
    func protoc() throws {
        let base = URL(fileURLWithPath: "/pkg/Sources/Api")
        let found = try ProtocLocator.locate(
            configured: nil,
            base: base,
            configPath: Self.path,
            environment: ["PATH": "/nonexistent:/usr/bin"]
        )
        #expect(found.path == "/usr/bin/protoc")
        #expect(
            try ProtocLocator.locate(configured: "/usr/bin/protoc", base: base, configPath: Self.path, environment: [:])
                .path == "/usr/bin/protoc"
        )
        #expect(
            try ProtocLocator.locate(
                configured: "protoc",
                base: base,
                configPath: Self.path,
                environment: ["PATH": "/usr/bin"]
            ).path == "/usr/bin/protoc"
        )

        #expect(
            throws: GeneratorConfigError(
                path: Self.path,
                problem: "needs protoc, and there is no protoc on PATH (/nonexistent)",
                fix:
                    "install it (Debian/Ubuntu: apt-get install protobuf-compiler; macOS: brew install protobuf) or set \"protocPath\""
            )
        ) {
            try ProtocLocator.locate(
                configured: nil,
                base: base,
                configPath: Self.path,
                environment: ["PATH": "/nonexistent"]
            )
        }
        #expect(
            throws: GeneratorConfigError(
                path: Self.path,
                problem: "names \"protocPath\": \"tools/protoc\", which is not an executable file",
                fix: "point it at protoc (e.g. /usr/bin/protoc), or remove the key to use protoc on PATH"
            )
        ) {
            try ProtocLocator.locate(
                configured: "tools/protoc",
                base: base,
                configPath: Self.path,
                environment: ["PATH": "/usr/bin"]
            )
        }
        let viaEnvironment = Result {
            try ProtocLocator.locate(
                configured: nil,
                base: base,
                configPath: Self.path,
                environment: ["PROTOC_PATH": "/nonexistent/protoc", "PATH": "/usr/bin"]
            )
        }
        #expect(throws: GeneratorConfigError.self) { try viaEnvironment.get() }
    }
}
