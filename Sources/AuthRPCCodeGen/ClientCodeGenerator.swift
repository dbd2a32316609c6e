package import SwiftProtobuf
package import SwiftProtobufPluginLibrary

/// protoc-gen-authrpc-swift as a protoc plugin: one `.authrpc.swift` file per `.proto` file
/// protoc asks for.
package final class ClientCodeGenerator: CodeGenerator {
    package init() {}

    package var version: String? { "0.1.0" }

    package var projectURL: String? { "swift-authrpc: typed, authenticated gRPC clients (unary calls) for AuthRPC" }

    package var supportedFeatures: [Google_Protobuf_Compiler_CodeGeneratorResponse.Feature] {
        [.proto3Optional, .supportsEditions]
    }

    package var supportedEditionRange: ClosedRange<Google_Protobuf_Edition> {
        DescriptorSet.bundledEditionsSupport
    }

    package func generate(
        files: [FileDescriptor],
        parameter: any CodeGeneratorParameter,
        protoCompilerContext: any ProtoCompilerContext,
        generatorOutputs: any GeneratorOutputs
    ) throws {
        let options = try GeneratorOptions(pairs: parameter.parsedPairs)
        try Self.checkServiceConfigs(options.serviceConfigs)
        // Every file protoc asks for lands in one module, so names are checked across all of them.
        let scope = try RequestScope(files: files, options: options)
        for file in files {
            let source = try ClientFileGenerator(file: file, options: options, scope: scope).generate()
            try generatorOutputs.add(fileName: options.fileNaming.outputFileName(for: file.name), contents: source)
        }
    }

    /// Two files that configure one service would make the embedded text depend on their order.
    static func checkServiceConfigs(_ configs: [ServiceConfigFile]) throws(GeneratorError) {
        var owner: [String: String] = [:]
        for config in configs {
            for service in config.services.sorted() {
                if let first = owner[service] {
                    throw .serviceConfiguredTwice(service: service, paths: [first, config.path])
                }
                owner[service] = config.path
            }
        }
        if configs.filter(\.configuresEveryService).count > 1 {
            throw .serviceConfiguredTwice(
                service: "the default for every service",
                paths: configs.filter(\.configuresEveryService).map(\.path)
            )
        }
    }
}

/// The Swift names every file of one protoc request declares (they all go into one module): the
/// top-level messages and enums, and the clients.
struct RequestScope {
    /// Top-level type names, with the file that declares each.
    var typeNames: [String: String] = [:]
    /// Client names, with the file that declares each.
    var clientNames: [String: String] = [:]

    init(files: [FileDescriptor], options: GeneratorOptions) throws(GeneratorError) {
        for file in files {
            let namer = SwiftProtobufNamer(currentFile: file, protoFileToModuleMappings: options.moduleMappings)
            for message in file.messages { typeNames[namer.relativeName(message: message)] = file.name }
            for anEnum in file.enums { typeNames[namer.relativeName(enum: anEnum)] = file.name }
        }
        for file in files {
            let namer = SwiftProtobufNamer(currentFile: file, protoFileToModuleMappings: options.moduleMappings)
            for service in file.services {
                let name = SwiftNames.clientTypeName(service, namer: namer)
                guard clientNames[name] == nil, typeNames[name] == nil else {
                    throw .nameCollision(file: file.name, name: name)
                }
                clientNames[name] = file.name
            }
        }
    }
}
