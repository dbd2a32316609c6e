import Foundation
import TestSupport

/// protoc with the built plugins over `.proto` files written for a test, and swiftc over what
/// they generate.
enum Protoc {
    /// What one protoc run left: its exit status, the generated files by name, its standard error.
    struct Output {
        var status: Int32
        var files: [String: String]
        var stderr: String
    }

    /// The products directory of the build the tests come from.
    static var products: URL { PackageRoot.builtProduct("protoc-gen-authrpc-swift").deletingLastPathComponent() }

    /// Writes `files` (relative names to text) into a scratch directory and runs protoc over
    /// `generate` (defaults to every file) with protoc-gen-authrpc-swift and `options`, and with
    /// protoc-gen-swift too when `messages` is set. Imports are found among `files`, in the
    /// package's `Protos` (googleapis' annotations) and in swift-protobuf's well-known types.
    static func run(
        _ files: [String: String],
        generate: [String]? = nil,
        options: [String] = [],
        messages: Bool = false
    ) async throws -> Output {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("codegen-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let input = root.appendingPathComponent("in")
        let output = root.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        for (name, text) in files {
            let url = input.appendingPathComponent(name)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        let wellKnown = PackageRoot.url.appendingPathComponent(
            ".build/checkouts/swift-protobuf/Protos/Sources/SwiftProtobuf"
        )
        var arguments = [
            "-I", input.path, "-I", PackageRoot.url.appendingPathComponent("Protos").path, "-I",
            wellKnown.path,
            "--plugin=protoc-gen-authrpc-swift=\(products.appendingPathComponent("protoc-gen-authrpc-swift").path)",
            "--authrpc-swift_out=\(output.path)",
        ]
        arguments += options.map { "--authrpc-swift_opt=\($0)" }
        if messages {
            arguments += [
                "--plugin=protoc-gen-swift=\(products.appendingPathComponent("protoc-gen-swift").path)",
                "--swift_out=\(output.path)",
            ]
            arguments += options.filter { !$0.hasPrefix("ServiceConfig=") }.map { "--swift_opt=\($0)" }
        }
        arguments += generate ?? files.keys.sorted()
        let protoc = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["protoc"] + arguments)

        var generated: [String: String] = [:]
        if let walker = FileManager.default.enumerator(at: output, includingPropertiesForKeys: nil) {
            for case let url as URL in walker where url.pathExtension == "swift" {
                generated[String(url.path.dropFirst(output.path.count + 1))] = try String(
                    contentsOf: url,
                    encoding: .utf8
                )
            }
        }
        return Output(status: protoc.status, files: generated, stderr: protoc.stderr)
    }

    /// Type-checks `sources` as one module (`GeneratedModule`) against the modules this build made
    /// (AuthRPC, SwiftProtobuf, GoogleAPICore): swiftc's exit status and its diagnostics.
    static func typecheck(_ sources: [String: String]) async throws -> (status: Int32, output: String) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("typecheck-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        var paths: [String] = []
        for (name, text) in sources {
            let url = root.appendingPathComponent(name.replacingOccurrences(of: "/", with: "_"))
            try text.write(to: url, atomically: true, encoding: .utf8)
            paths.append(url.path)
        }
        // AuthRPC's C dependencies are found through their module maps, as SwiftPM passes them.
        let moduleMaps = ["CNGHTTP2", "COpenSSL", "CPlatform", "CZlib"].flatMap {
            [
                "-Xcc",
                "-fmodule-map-file=\(PackageRoot.url.appendingPathComponent("Sources/\($0)/module.modulemap").path)",
            ]
        }
        let swiftc = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "swiftc", "-typecheck", "-swift-version", "6", "-module-name", "GeneratedModule", "-I",
                products.appendingPathComponent("Modules").path,
            ] + moduleMaps + paths.sorted()
        )
        return (swiftc.status, swiftc.stdout + swiftc.stderr)
    }
}

extension Protoc {
    /// Compiles `source` as a program of its own (no dependencies) and runs it: the program's
    /// exit status and what it printed, or swiftc's when it did not compile.
    static func execute(_ source: String) async throws -> (status: Int32, output: String) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("program-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let file = root.appendingPathComponent("main.swift")
        let binary = root.appendingPathComponent("program")
        try source.write(to: file, atomically: true, encoding: .utf8)
        let compiled = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["swiftc", "-swift-version", "6", file.path, "-o", binary.path]
        )
        guard compiled.status == 0 else { return (compiled.status, compiled.stdout + compiled.stderr) }
        let ran = try await ChildProcess.run(binary, [])
        return (ran.status, ran.stdout + ran.stderr)
    }
}
