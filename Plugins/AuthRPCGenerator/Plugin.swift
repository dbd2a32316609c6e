import Foundation
import PackagePlugin

/// Generates swift-protobuf messages and AuthRPC clients from a target's `.proto` files, as
/// configured by the target's `authrpc-swift-config.json` (see ``GeneratorConfig``).
///
/// One `protoc` run per `.proto` file, with protoc-gen-swift and protoc-gen-authrpc-swift (both
/// built from source by SwiftPM). `protoc` itself is never built: it is the config's
/// `protocPath`, else `PROTOC_PATH`, else `protoc` on `PATH`. Imports are looked up in the
/// config's directory, then its `importPaths`, then swift-protobuf's well-known types.
@main
struct AuthRPCGenerator: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        guard let target = target as? SwiftSourceModuleTarget else {
            throw GeneratorConfigError(
                path: "target '\(target.name)'",
                problem: "is not a Swift target",
                fix: "apply the AuthRPCGenerator plugin to a Swift target"
            )
        }
        let protos = target.sourceFiles(withSuffix: ".proto").map(\.url).sorted { $0.path < $1.path }
        let configs = target.sourceFiles.map(\.url).filter { $0.lastPathComponent == GeneratorConfig.fileName }
        guard !protos.isEmpty else { return [] }
        guard let configURL = configs.first else {
            throw GeneratorConfigError(
                path: target.directoryURL.path,
                problem: "has .proto files but no \(GeneratorConfig.fileName)",
                fix: "add one (\"{}\" takes the defaults) next to the .proto files"
            )
        }
        guard configs.count == 1 else {
            throw GeneratorConfigError(
                path: target.directoryURL.path,
                problem:
                    "has \(configs.count) \(GeneratorConfig.fileName) files (\(configs.map(\.path).joined(separator: ", ")))",
                fix: "keep one, in the directory that contains the .proto files"
            )
        }
        let config = try GeneratorConfig(json: try Data(contentsOf: configURL), path: configURL.path)
        let base = configURL.deletingLastPathComponent()
        let configured = config.importPaths.map { URL(fileURLWithPath: $0, relativeTo: base).standardizedFileURL }
        for (entry, directory) in zip(config.importPaths, configured) where !isDirectory(directory) {
            throw GeneratorConfigError(
                path: configURL.path,
                problem: "lists \"\(entry)\" in \"importPaths\", which is not a directory (\(directory.path))",
                fix: "fix or remove that entry"
            )
        }
        // The well-known types last, from the swift-protobuf the generated code links against, so
        // they match it and no system package is needed for them.
        let importPaths = [base] + configured + [wellKnownTypes(in: context.package)].compactMap { $0 }
        let protoc = try ProtocLocator.locate(configured: config.protocPath, base: base, configPath: configURL.path)
        let mappings = try config.moduleMappings.map { path throws(GeneratorConfigError) -> URL in
            let url = URL(fileURLWithPath: path, relativeTo: base).standardizedFileURL
            guard FileManager.default.isReadableFile(atPath: url.path) else {
                throw GeneratorConfigError(
                    path: configURL.path,
                    problem: "names \"moduleMappings\": \"\(path)\", which cannot be read (\(url.path))",
                    fix: "point it at a module mappings file, or remove the key"
                )
            }
            return url
        }

        let swiftPlugin = try context.tool(named: "protoc-gen-swift").url
        let clientPlugin = try context.tool(named: "protoc-gen-authrpc-swift").url
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("GeneratedSources")

        return try protos.map { proto throws -> Command in
            let name = try protoName(proto, base: base, configPath: configURL.path)
            try checkImports(of: proto, importPaths: importPaths, protoc: protoc, configPath: configURL.path)
            let stem = String(name.dropLast(".proto".count).map { $0 == "/" ? "_" : $0 })
            var arguments = importPaths.map { "--proto_path=\($0.path)" }
            var outputs: [URL] = []
            if config.messages {
                arguments += [
                    "--plugin=protoc-gen-swift=\(swiftPlugin.path)", "--swift_out=\(output.path)",
                    "--swift_opt=Visibility=\(config.visibility)", "--swift_opt=FileNaming=PathToUnderscores",
                ]
                if let mappings { arguments.append("--swift_opt=ProtoPathModuleMappings=\(mappings.path)") }
                if config.accessLevelOnImports { arguments.append("--swift_opt=UseAccessLevelOnImports=true") }
                outputs.append(output.appendingPathComponent(stem + ".pb.swift"))
            }
            if config.clients {
                arguments += [
                    "--plugin=protoc-gen-authrpc-swift=\(clientPlugin.path)", "--authrpc-swift_out=\(output.path)",
                    "--authrpc-swift_opt=Visibility=\(config.visibility)",
                    "--authrpc-swift_opt=FileNaming=PathToUnderscores",
                ]
                if let mappings { arguments.append("--authrpc-swift_opt=ProtoPathModuleMappings=\(mappings.path)") }
                if config.accessLevelOnImports { arguments.append("--authrpc-swift_opt=UseAccessLevelOnImports=true") }
                outputs.append(output.appendingPathComponent(stem + ".authrpc.swift"))
            }
            arguments.append(name)
            return .buildCommand(
                displayName: "Generating Swift for \(name) (protoc-gen-swift, protoc-gen-authrpc-swift)",
                executable: protoc,
                arguments: arguments,
                inputFiles: protos + [configURL, swiftPlugin, clientPlugin] + (mappings.map { [$0] } ?? []),
                outputFiles: outputs
            )
        }
    }

    /// The name protoc knows the file by: its path below the config's directory.
    private func protoName(_ proto: URL, base: URL, configPath: String) throws(GeneratorConfigError) -> String {
        let basePath = base.standardizedFileURL.path + "/"
        let path = proto.standardizedFileURL.path
        guard path.hasPrefix(basePath) else {
            throw GeneratorConfigError(
                path: path,
                problem: "is not below the directory of \(configPath)",
                fix: "move the .proto file (or the config) so the config's directory contains it"
            )
        }
        return String(path.dropFirst(basePath.count))
    }

    /// Every import must be in an import path (well-known types come with protoc): otherwise the
    /// error names the importing line and the config key to change.
    private func checkImports(of proto: URL, importPaths: [URL], protoc: URL, configPath: String) throws {
        let source = try String(contentsOf: proto, encoding: .utf8)
        for anImport in ProtoImports.imports(in: source) where !ProtoImports.isWellKnown(anImport.path) {
            let found = importPaths.contains {
                FileManager.default.fileExists(atPath: $0.appendingPathComponent(anImport.path).path)
            }
            if !found {
                throw GeneratorConfigError(
                    path: "\(proto.path):\(anImport.line)",
                    problem:
                        "imports \"\(anImport.path)\", which is in none of the import paths (\(importPaths.map(\.path).joined(separator: ", ")))",
                    fix: "add the directory that contains \(anImport.path) to \"importPaths\" in \(configPath)"
                )
            }
        }
    }

    /// `Protos/Sources/SwiftProtobuf` of the swift-protobuf package in the dependency graph.
    private func wellKnownTypes(in package: Package) -> URL? {
        var queue = [package]
        var seen = Set<String>()
        while let next = queue.popLast() {
            guard seen.insert(next.id).inserted else { continue }
            if next.id == "swift-protobuf" {
                let directory = next.directoryURL.appendingPathComponent("Protos/Sources/SwiftProtobuf")
                return isDirectory(directory) ? directory : nil
            }
            queue += next.dependencies.map(\.package)
        }
        return nil
    }

    private func isDirectory(_ url: URL) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue
    }
}
