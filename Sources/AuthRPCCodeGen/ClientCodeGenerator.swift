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
        for file in files {
            let source = try ClientFileGenerator(file: file, options: options).generate()
            try generatorOutputs.add(fileName: options.fileNaming.outputFileName(for: file.name), contents: source)
        }
    }
}
