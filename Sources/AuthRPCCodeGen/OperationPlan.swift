import SwiftProtobuf
import SwiftProtobufPluginLibrary

/// A long-running method (AIP-151): it returns `google.longrunning.Operation` and names its
/// response and metadata types in `google.longrunning.operation_info`. Its client gets a
/// `<method>Operation(_:options:)` that returns GoogleAPICore's `LongRunningOperation`,
/// typed with them.
struct OperationPlan {
    /// The module whose `LongRunningOperation` the generated code uses.
    static let helperModule = ClientFileGenerator.googleAPIModule

    /// The operation's response and metadata messages.
    var response: Descriptor
    var metadata: Descriptor
    /// The Swift type of the operation's response.
    var responseType: String
    /// The Swift type of the operation's metadata.
    var metadataType: String
    /// The proto names, for the documentation.
    var responseProtoName: String
    var metadataProtoName: String

    /// Why a long-running method gets no typed helper, for its documentation; `nil` when it does.
    enum Outcome {
        case helper(OperationPlan)
        case notAvailable(reason: String)
    }

    /// The plan for `method`: `nil` when it does not return an `Operation` with an
    /// `operation_info`.
    static func make(
        method: MethodDescriptor,
        annotations: MethodAnnotations,
        namer: SwiftProtobufNamer,
        moduleMappings: ProtoFileToModuleMappings
    ) throws(GeneratorError) -> Outcome? {
        guard method.outputType.fullName == "google.longrunning.Operation", let info = annotations.operationInfo else {
            return nil
        }
        func fail(_ problem: String) -> GeneratorError {
            .badAnnotation(file: method.file.name, method: method.fullName, problem: problem)
        }
        guard !info.responseType.isEmpty, !info.metadataType.isEmpty else {
            throw fail("google.longrunning.operation_info must name both response_type and metadata_type (AIP-151)")
        }
        let response = try resolve(info.responseType, from: method, fail)
        let metadata = try resolve(info.metadataType, from: method, fail)
        guard moduleMappings.moduleName(forFile: method.outputType.file) == helperModule else {
            return .notAvailable(
                reason:
                    "map \(method.outputType.file.name) to \(helperModule) (ProtoPathModuleMappings) for a typed `LongRunningOperation`"
            )
        }
        return .helper(
            OperationPlan(
                response: response,
                metadata: metadata,
                responseType: namer.fullName(message: response),
                metadataType: namer.fullName(message: metadata),
                responseProtoName: response.fullName,
                metadataProtoName: metadata.fullName
            )
        )
    }

    /// AIP-151: a type in the method's package may be named without it; others are fully
    /// qualified.
    private static func resolve(
        _ name: String,
        from method: MethodDescriptor,
        _ fail: (String) -> GeneratorError
    ) throws(GeneratorError) -> Descriptor {
        let package = method.file.package
        let candidates = (package.isEmpty ? [] : ["\(package).\(name)"]) + [name]
        for candidate in candidates {
            if let found = findMessage(named: candidate, in: method.file) { return found }
        }
        throw fail(
            "google.longrunning.operation_info names \(name), which is not a message in \(method.file.name) or the files it imports"
        )
    }

    /// The message named `fullName` in `file` or any file it imports, directly or not.
    private static func findMessage(named fullName: String, in file: FileDescriptor) -> Descriptor? {
        var queue = [file]
        var seen = Set<String>()
        while let next = queue.popLast() {
            guard seen.insert(next.name).inserted else { continue }
            var messages = next.messages
            while let message = messages.popLast() {
                if message.fullName == fullName { return message }
                messages += message.messages
            }
            queue += next.dependencies
        }
        return nil
    }
}
