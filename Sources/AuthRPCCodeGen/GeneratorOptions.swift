package import SwiftProtobufPluginLibrary

/// What the generator was asked for: protoc's `--authrpc-swift_opt` parameters, with the names and
/// meanings protoc-gen-swift gives them, so generated clients compile beside its output.
package struct GeneratorOptions {
    /// The access level of the generated clients.
    package enum Visibility: String, CaseIterable {
        case `internal` = "Internal"
        case `public` = "Public"
        case `package` = "Package"

        /// The access level written before an import (`internal` spelled out).
        var importModifier: String {
            switch self {
            case .internal: "internal "
            case .public: "public "
            case .package: "package "
            }
        }

        /// The modifier written before each declaration (none for `internal`).
        var modifier: String {
            switch self {
            case .internal: ""
            case .public: "public "
            case .package: "package "
            }
        }
    }

    /// How an output file is named after its `.proto` file (`foo/bar/baz.proto`).
    package enum FileNaming: String, CaseIterable {
        /// `foo/bar/baz.authrpc.swift`.
        case fullPath = "FullPath"
        /// `foo_bar_baz.authrpc.swift`.
        case pathToUnderscores = "PathToUnderscores"
        /// `baz.authrpc.swift`.
        case dropPath = "DropPath"
    }

    package private(set) var visibility = Visibility.internal
    package private(set) var fileNaming = FileNaming.fullPath
    /// Which Swift module holds the types of which `.proto` file (protoc-gen-swift's
    /// `ProtoPathModuleMappings`); none by default: everything in one module.
    package private(set) var moduleMappings = ProtoFileToModuleMappings()
    /// Whether imports carry the generated code's access level (`public import AuthRPC`), as
    /// protoc-gen-swift's `UseAccessLevelOnImports` does; needed by modules built with
    /// `InternalImportsByDefault`. Off by default: plain `import`.
    package private(set) var useAccessLevelOnImports = false
    /// gRPC service config files (gRFC A6 JSON, `ServiceConfig=PATH`, repeatable): each client of a
    /// service one of them names embeds that file's text as `serviceConfigJSON`. None by default.
    private(set) var serviceConfigs: [ServiceConfigFile] = []

    /// The parameter names this generator understands.
    package static let parameterNames = [
        "Visibility", "FileNaming", "ProtoPathModuleMappings", "UseAccessLevelOnImports", "ServiceConfig",
    ]

    /// Parses protoc's parameter pairs; throws for an unknown name or value.
    package init(pairs: [(key: String, value: String)]) throws(GeneratorError) {
        for (key, value) in pairs {
            switch key {
            case "Visibility":
                guard let visibility = Visibility(rawValue: value) else {
                    throw .invalidParameterValue(name: key, value: value, allowed: Visibility.allCases.map(\.rawValue))
                }
                self.visibility = visibility
            case "FileNaming":
                guard let naming = FileNaming(rawValue: value) else {
                    throw .invalidParameterValue(name: key, value: value, allowed: FileNaming.allCases.map(\.rawValue))
                }
                fileNaming = naming
            case "ProtoPathModuleMappings":
                guard !value.isEmpty else { continue }
                do {
                    moduleMappings = try ProtoFileToModuleMappings(path: value)
                } catch {
                    throw .unreadableModuleMappings(path: value, reason: "\(error)")
                }
            case "UseAccessLevelOnImports":
                guard let flag = Bool(value) else {
                    throw .invalidParameterValue(name: key, value: value, allowed: ["true", "false"])
                }
                useAccessLevelOnImports = flag
            case "ServiceConfig":
                guard !value.isEmpty else {
                    throw .invalidParameterValue(name: key, value: value, allowed: ["the path of a JSON file"])
                }
                serviceConfigs.append(try ServiceConfigFile(path: value))
            default:
                throw .unknownParameter(name: key)
            }
        }
    }
}

/// Why the generator refused a request; protoc prints the description next to the file.
package enum GeneratorError: Error, CustomStringConvertible, Equatable {
    case unknownParameter(name: String)
    case invalidParameterValue(name: String, value: String, allowed: [String])
    case unreadableModuleMappings(path: String, reason: String)
    case nameCollision(file: String, name: String)
    /// A referenced type's Swift name is also the name of one of the client's members.
    case shadowedType(file: String, client: String, name: String)
    case unreadableServiceConfig(path: String, reason: String)
    case invalidServiceConfig(path: String, problem: String)
    /// Two service configs name the same service.
    case serviceConfiguredTwice(service: String, paths: [String])
    /// An annotation (`google.api.http`, `google.api.routing`, `google.longrunning.operation_info`)
    /// the generator cannot honour.
    case badAnnotation(file: String, method: String, problem: String)

    package var description: String {
        switch self {
        case .unknownParameter(let name):
            "unknown parameter '\(name)' (known: \(GeneratorOptions.parameterNames.joined(separator: ", ")))"
        case .invalidParameterValue(let name, let value, let allowed):
            "parameter '\(name)' cannot be '\(value)' (one of: \(allowed.joined(separator: ", ")))"
        case .unreadableModuleMappings(let path, let reason):
            "cannot use ProtoPathModuleMappings=\(path): \(reason)"
        case .nameCollision(let file, let name):
            "\(Printable.text(file)): '\(name)' would be declared twice (a client and another client, method, message or enum share the name, or a type is named like a module the client uses); rename one, or give the file a distinct `option swift_prefix`"
        case .shadowedType(let file, let client, let name):
            "\(Printable.text(file)): the type '\(name)' has the name of a member of \(client), which would hide it there; rename the type, or give the file a package or `option swift_prefix`"
        case .unreadableServiceConfig(let path, let reason):
            "cannot read ServiceConfig=\(Printable.text(path)): \(reason)"
        case .invalidServiceConfig(let path, let problem):
            "ServiceConfig=\(Printable.text(path)) \(problem); gRPC's service config is gRFC A6's JSON (https://github.com/grpc/grpc/blob/master/doc/service_config.md)"
        case .serviceConfiguredTwice(let service, let paths):
            "\(service) is configured by more than one ServiceConfig (\(paths.map(Printable.text).joined(separator: ", "))); give each service one file"
        case .badAnnotation(let file, let method, let problem):
            "\(Printable.text(file)): \(method): \(problem)"
        }
    }
}
