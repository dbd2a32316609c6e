import SwiftProtobufPluginLibrary

/// Swift names for services and methods, consistent with swift-protobuf's names for messages.
enum SwiftNames {
    /// `Google_Longrunning_OperationsClient` for `google.longrunning.Operations`: the file's type
    /// prefix (its package, or `option swift_prefix`) as swift-protobuf computes it, the service's
    /// name and `Client`.
    static func clientTypeName(_ service: ServiceDescriptor, namer: SwiftProtobufNamer) -> String {
        namer.typePrefix(forFile: service.file) + service.name + "Client"
    }

    /// `listOperations` for `ListOperations`; Swift keywords are quoted, and the names the client
    /// itself uses get a trailing underscore (swift-protobuf's rule for reserved names).
    static func functionName(_ method: MethodDescriptor) -> String {
        let name = NamingUtils.toLowerCamelCase(method.name)
        if clientMemberNames.contains(name) { return name + "_" }
        if swiftKeywordsUsedInDeclarations.contains(name) || swiftKeywordsUsedInStatements.contains(name)
            || swiftKeywordsUsedInExpressionsAndTypes.contains(name)
        {
            return "`\(name)`"
        }
        return name
    }

    /// Members every client has, which a method must not shadow.
    private static let clientMemberNames: Set<String> = ["channel", "serviceName", "init", "self", "Type", "Protocol"]
}
