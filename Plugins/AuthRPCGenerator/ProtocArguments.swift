import Foundation

/// protoc's command line, written so that protoc reads each path as the path it is.
///
/// protoc reads an argument that starts with `-` as a flag and one that starts with `@` as a
/// file of arguments; splits `--proto_path` at `:` (the list separator) and at the first `=` (a
/// virtual path); takes what comes before the first `:` of `--X_out` as parameters; and hands a
/// plugin its `--X_opt` values joined with `,`, which the plugin splits again. What can be written
/// another way is (`--proto_path==DIR`, `--X_out=:DIR`); what cannot is refused with an error
/// that names the path and the key that brought it.
enum ProtocArguments {
    /// `--proto_path=DIR` (`--proto_path==DIR` when DIR has a `=`: an empty virtual path).
    static func protoPath(_ directory: URL, configPath: String, origin: String) throws(GeneratorConfigError) -> String {
        let path = directory.path
        guard !path.contains(":") else {
            throw GeneratorConfigError(
                path: configPath,
                problem: "needs \(origin) \(path) as an import path, and protoc splits import paths at \":\"",
                fix: "move or link the directory to a path without \":\""
            )
        }
        return path.contains("=") ? "--proto_path==\(path)" : "--proto_path=\(path)"
    }

    /// `--NAME_out=DIR` (`--NAME_out=:DIR` when DIR has a `:`, so protoc reads no parameters in it).
    static func output(_ name: String, _ directory: URL) -> String {
        let path = directory.path
        return path.contains(":") ? "--\(name)_out=:\(path)" : "--\(name)_out=\(path)"
    }

    /// `--NAME_opt=KEY=PATH`, for a path without `,`.
    static func option(
        _ name: String,
        key: String,
        path: URL,
        configPath: String,
        configKey: String
    ) throws(GeneratorConfigError) -> String {
        guard !path.path.contains(",") else {
            throw GeneratorConfigError(
                path: configPath,
                problem:
                    "names in \"\(configKey)\" \(path.path), and protoc passes options to plugins joined with \",\", so a path cannot hold one",
                fix: "rename or link the file to a path without \",\""
            )
        }
        return "--\(name)_opt=\(key)=\(path.path)"
    }

    /// The name a `.proto` file is given to protoc by, which must not read as a flag (`-…`) or a
    /// file of arguments (`@…`).
    static func checkProtoName(_ name: String, file: String) throws(GeneratorConfigError) {
        guard let first = name.first, first != "-", first != "@" else {
            throw GeneratorConfigError(
                path: file,
                problem:
                    "would be passed to protoc as \"\(name)\", which protoc reads as a flag or a file of arguments",
                fix: "rename it (or the directory it is in) so its path does not start with \"-\" or \"@\""
            )
        }
    }
}
