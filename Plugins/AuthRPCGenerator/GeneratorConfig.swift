import Foundation

/// A target's `authrpc-swift-config.json`: what the AuthRPCGenerator build plugin generates from
/// the target's `.proto` files, and how it runs `protoc`.
///
/// ```json
/// {
///   "messages": true,
///   "clients": true,
///   "visibility": "internal",
///   "importPaths": ["../../Protos"],
///   "protocPath": "/usr/bin/protoc",
///   "moduleMappings": "module_mappings.asciipb",
///   "accessLevelOnImports": true,
///   "serviceConfigs": ["pubsub_grpc_service_config.json"]
/// }
/// ```
///
/// Every key is optional. Paths are relative to the directory of the config file.
struct GeneratorConfig: Equatable {
    /// The name the plugin looks for in a target.
    static let fileName = "authrpc-swift-config.json"

    /// The keys a config may have; any other key is an error (a typo would otherwise be ignored).
    static let keys = [
        "messages", "clients", "visibility", "importPaths", "protocPath", "moduleMappings", "accessLevelOnImports",
        "serviceConfigs",
    ]

    /// The visibilities protoc-gen-swift and protoc-gen-authrpc-swift accept.
    static let visibilities = ["internal", "public", "package"]

    /// Generate swift-protobuf messages (protoc-gen-swift); default `true`.
    var messages = true
    /// Generate AuthRPC clients (protoc-gen-authrpc-swift); default `true`.
    var clients = true
    /// `Internal`, `Public` or `Package`, as the generators spell it; default `Internal`.
    var visibility = "Internal"
    /// Directories searched for imports, after the config file's own directory.
    var importPaths: [String] = []
    /// The `protoc` to run; default: `protoc` on `PATH`.
    var protocPath: String?
    /// A `ProtoPathModuleMappings` file (text-format `SwiftProtobuf_GenSwift_ModuleMappings`).
    var moduleMappings: String?
    /// Write imports with the generated code's access level (`public import SwiftProtobuf`), for
    /// targets built with `InternalImportsByDefault`; default `false`. Both generators'
    /// `UseAccessLevelOnImports`.
    var accessLevelOnImports = false
    /// gRPC service config files (gRFC A6 JSON, as Google publishes `*_grpc_service_config.json`
    /// with its APIs): each client of a service one of them names embeds the file's text as
    /// `serviceConfigJSON`. The generator checks them and names the file in any error. None by
    /// default.
    var serviceConfigs: [String] = []

    /// Parses `data`, the content of the config file at `path` (named in every error).
    init(json data: Data, path: String) throws(GeneratorConfigError) {
        let dictionary: [String: JSONValue]
        do {
            dictionary = try JSONDecoder().decode([String: JSONValue].self, from: data)
        } catch {
            throw GeneratorConfigError(
                path: path,
                problem: "is not a JSON object",
                fix: "write a JSON object such as {\"visibility\": \"public\"}"
            )
        }
        for key in dictionary.keys.sorted() where !Self.keys.contains(key) {
            throw GeneratorConfigError(
                path: path,
                problem: "has an unknown key \"\(key)\"",
                fix: "use only \(Self.keys.map { "\"\($0)\"" }.joined(separator: ", "))"
            )
        }
        func mismatch(_ key: String, _ described: String) -> GeneratorConfigError {
            GeneratorConfigError(
                path: path,
                problem: "has \"\(key)\" that is not \(described)",
                fix: "make \"\(key)\" \(described)"
            )
        }
        for (key, value) in dictionary {
            switch (key, value) {
            case ("messages", .bool(let flag)): messages = flag
            case ("clients", .bool(let flag)): clients = flag
            case ("messages", _), ("clients", _): throw mismatch(key, "true or false")
            case ("visibility", .string(let visibility)):
                guard Self.visibilities.contains(visibility.lowercased()) else {
                    throw GeneratorConfigError(
                        path: path,
                        problem: "has \"visibility\": \"\(visibility)\"",
                        fix: "use one of \(Self.visibilities.map { "\"\($0)\"" }.joined(separator: ", "))"
                    )
                }
                self.visibility = visibility.prefix(1).uppercased() + visibility.dropFirst().lowercased()
            case ("visibility", _): throw mismatch(key, "a string")
            case ("importPaths", .array(let items)):
                importPaths = try items.map { item throws(GeneratorConfigError) in
                    guard case .string(let path) = item, !path.isEmpty else {
                        throw mismatch(key, "an array of directory paths")
                    }
                    return path
                }
            case ("importPaths", _): throw mismatch(key, "an array of directory paths")
            case ("protocPath", .string(let path)) where !path.isEmpty: protocPath = path
            case ("protocPath", _): throw mismatch(key, "a path to protoc")
            case ("moduleMappings", .string(let path)) where !path.isEmpty: moduleMappings = path
            case ("moduleMappings", _): throw mismatch(key, "a path to a module mappings file")
            case ("accessLevelOnImports", .bool(let flag)): accessLevelOnImports = flag
            case ("accessLevelOnImports", _): throw mismatch(key, "true or false")
            case ("serviceConfigs", .array(let items)):
                serviceConfigs = try items.map { item throws(GeneratorConfigError) in
                    guard case .string(let path) = item, !path.isEmpty else {
                        throw mismatch(key, "an array of paths to service config files")
                    }
                    return path
                }
            case ("serviceConfigs", _): throw mismatch(key, "an array of paths to service config files")
            default: break
            }
        }
        if !messages && !clients {
            throw GeneratorConfigError(
                path: path,
                problem: "turns off both \"messages\" and \"clients\"",
                fix: "set one of them to true, or remove the config and the .proto files"
            )
        }
    }
}

/// Any JSON value, so the config's keys and types can be checked one by one.
private enum JSONValue: Decodable {
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
    case null

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let items = try? container.decode([JSONValue].self) {
            self = .array(items)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }
}

/// A problem with the plugin's input, said as: the file, what is wrong, what to do.
struct GeneratorConfigError: Error, CustomStringConvertible, Equatable {
    /// The file the problem is in (the config, or a `.proto` file).
    var path: String
    /// What is wrong.
    var problem: String
    /// What to do about it.
    var fix: String

    var description: String { "\(path) \(problem): \(fix)" }
}
