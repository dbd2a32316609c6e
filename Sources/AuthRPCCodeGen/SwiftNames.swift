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
        sanitize(baseName(method))
    }

    /// The name of a helper a method gets (`listTopicsPages`): the method's name and `suffix`.
    static func functionName(_ method: MethodDescriptor, suffix: String) -> String {
        sanitize(baseName(method) + suffix)
    }

    /// The method's name in lower camel case. A name of underscores alone (`rpc _`), which camel
    /// casing empties, keeps them and gets `method`: `_method`.
    private static func baseName(_ method: MethodDescriptor) -> String {
        let name = NamingUtils.toLowerCamelCase(method.name)
        if name.allSatisfy({ $0 == "_" }) { return method.name + "method" }
        return name
    }

    private static func sanitize(_ name: String) -> String {
        if clientMemberNames.contains(name) { return name + "_" }
        if swiftKeywordsUsedInDeclarations.contains(name) || swiftKeywordsUsedInStatements.contains(name)
            || swiftKeywordsUsedInExpressionsAndTypes.contains(name)
        {
            return "`\(name)`"
        }
        return name
    }

    /// Members every client may have, which a method must not shadow.
    static let clientMemberNames: Set<String> = [
        "channel", "serviceName", "defaultHost", "oauthScopes", "serviceConfigJSON", "serviceConfig", "init", "self",
        "Type",
        "Protocol", "Methods", "Routing",
    ]

    /// The types a client declares inside itself: a type the client refers to must not have one
    /// of these names, or the client's own would hide it.
    static let clientNestedTypeNames: Set<String> = ["Methods", "Routing"]
}
