import Foundation
import PackagePlugin

/// Generates swift-protobuf messages and AuthRPC clients from a target's `.proto` files, as
/// configured by the target's `authrpc-swift-config.json` (see ``GeneratorConfig``).
///
/// One `protoc` run per `.proto` file, with protoc-gen-swift and protoc-gen-authrpc-swift (both
/// built from source by SwiftPM). `protoc` itself is never built: it is the config's
/// `protocPath`, else `PROTOC_PATH`, else `protoc` on `PATH`. Imports are looked up in the
/// config's directory, then its `importPaths`, then swift-protobuf's well-known types. The files
/// the target's files import from `importPaths` are generated too (their types are needed at
/// compile time), unless `moduleMappings` gives them to another module.
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

        let serviceConfigs = try config.serviceConfigs.map { path throws(GeneratorConfigError) -> URL in
            let url = URL(fileURLWithPath: path, relativeTo: base).standardizedFileURL
            guard FileManager.default.isReadableFile(atPath: url.path) else {
                throw GeneratorConfigError(
                    path: configURL.path,
                    problem: "lists \"\(path)\" in \"serviceConfigs\", which cannot be read (\(url.path))",
                    fix: "point it at a gRPC service config (JSON), or remove the entry"
                )
            }
            return url
        }

        let swiftPlugin = try context.tool(named: "protoc-gen-swift").url
        let clientPlugin = try context.tool(named: "protoc-gen-authrpc-swift").url
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("GeneratedSources")

        // Written once, checked once: every import path, every option that carries a path.
        var common = try importPaths.map { directory throws(GeneratorConfigError) in
            try ProtocArguments.protoPath(
                directory,
                configPath: configURL.path,
                origin: directory == base ? "the config's directory" : "the import path"
            )
        }
        var swiftOptions = [
            "--plugin=protoc-gen-swift=\(swiftPlugin.path)", ProtocArguments.output("swift", output),
            "--swift_opt=Visibility=\(config.visibility)", "--swift_opt=FileNaming=PathToUnderscores",
        ]
        var clientOptions = [
            "--plugin=protoc-gen-authrpc-swift=\(clientPlugin.path)", ProtocArguments.output("authrpc-swift", output),
            "--authrpc-swift_opt=Visibility=\(config.visibility)", "--authrpc-swift_opt=FileNaming=PathToUnderscores",
        ]
        if let mappings {
            for (plugin, index) in [("swift", 0), ("authrpc-swift", 1)] {
                let option = try ProtocArguments.option(
                    plugin,
                    key: "ProtoPathModuleMappings",
                    path: mappings,
                    configPath: configURL.path,
                    configKey: "moduleMappings"
                )
                if index == 0 { swiftOptions.append(option) } else { clientOptions.append(option) }
            }
        }
        if config.accessLevelOnImports {
            swiftOptions.append("--swift_opt=UseAccessLevelOnImports=true")
            clientOptions.append("--authrpc-swift_opt=UseAccessLevelOnImports=true")
        }
        for serviceConfig in serviceConfigs {
            clientOptions.append(
                try ProtocArguments.option(
                    "authrpc-swift",
                    key: "ServiceConfig",
                    path: serviceConfig,
                    configPath: configURL.path,
                    configKey: "serviceConfigs"
                )
            )
        }
        if config.messages { common += swiftOptions }
        if config.clients { common += clientOptions }

        // The target's own .proto files, then the files they reach through "importPaths" (which
        // would otherwise be missing at compile time), except those another module holds.
        var sources: [(name: String, url: URL)] = []
        for proto in protos {
            let name = try protoName(proto, base: base, configPath: configURL.path)
            try checkImports(of: proto, importPaths: importPaths, protoc: protoc, configPath: configURL.path)
            sources.append((name, proto))
        }
        let mapped =
            try mappings.map { url in
                ModuleMappingsScan.protoFilePaths(in: try String(contentsOf: url, encoding: .utf8))
            } ?? []
        sources += try importedFiles(of: protos, base: base, importPaths: Array(configured), skipping: mapped)

        return try sources.map { name, proto throws -> Command in
            try ProtocArguments.checkProtoName(name, file: proto.path)
            let stem = String(name.dropLast(".proto".count).map { $0 == "/" ? "_" : $0 })
            var outputs: [URL] = []
            if config.messages { outputs.append(output.appendingPathComponent(stem + ".pb.swift")) }
            if config.clients { outputs.append(output.appendingPathComponent(stem + ".authrpc.swift")) }
            return .buildCommand(
                displayName: "Generating Swift for \(name) (protoc-gen-swift, protoc-gen-authrpc-swift)",
                executable: protoc,
                arguments: common + [name],
                inputFiles: sources.map(\.url) + [configURL, swiftPlugin, clientPlugin]
                    + (mappings.map { [$0] } ?? []) + serviceConfigs,
                outputFiles: outputs
            )
        }
    }

    /// The `.proto` files the target's files import, directly or not, that are found in one of
    /// `importPaths` (not in the target, not a well-known type, not mapped to another module),
    /// with the names protoc knows them by.
    private func importedFiles(
        of protos: [URL],
        base: URL,
        importPaths: [URL],
        skipping mapped: Set<String>
    ) throws -> [(name: String, url: URL)] {
        var found: [(name: String, url: URL)] = []
        var seen = Set<String>()
        var queue = protos
        while !queue.isEmpty {
            let file = queue.removeFirst()
            let source = try String(contentsOf: file, encoding: .utf8)
            for anImport in ProtoImports.imports(in: source) where !ProtoImports.isWellKnown(anImport.path) {
                guard seen.insert(anImport.path).inserted, !mapped.contains(anImport.path) else { continue }
                // The target's own files come first, as protoc looks them up.
                if FileManager.default.fileExists(atPath: base.appendingPathComponent(anImport.path).path) { continue }
                guard
                    let directory = importPaths.first(where: {
                        FileManager.default.fileExists(atPath: $0.appendingPathComponent(anImport.path).path)
                    })
                else { continue }
                let url = directory.appendingPathComponent(anImport.path).standardizedFileURL
                found.append((anImport.path, url))
                queue.append(url)
            }
        }
        return found.sorted { $0.name < $1.name }
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
