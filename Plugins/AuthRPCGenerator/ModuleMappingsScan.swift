import Foundation

/// The `.proto` files a `ProtoPathModuleMappings` file (text-format
/// `SwiftProtobuf_GenSwift_ModuleMappings`) maps to other modules: files the plugin must not
/// generate again when they are reached through `importPaths`.
enum ModuleMappingsScan {
    /// Every `proto_file_path: "…"` value in `text`, `#` comments skipped.
    static func protoFilePaths(in text: String) -> Set<String> {
        var paths = Set<String>()
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = Substring(rawLine)
            var inString = false
            var cut = line.endIndex
            for index in line.indices {
                let character = line[index]
                if character == "\"" { inString.toggle() }
                if character == "#" && !inString {
                    cut = index
                    break
                }
            }
            line = line[..<cut]
            var rest = line[...]
            while let key = rest.range(of: "proto_file_path") {
                rest = rest[key.upperBound...].drop { $0 == " " || $0 == "\t" }
                guard rest.first == ":" else { continue }
                rest = rest.dropFirst().drop { $0 == " " || $0 == "\t" }
                guard rest.first == "\"", let close = rest.dropFirst().firstIndex(of: "\"") else { break }
                paths.insert(String(rest[rest.index(after: rest.startIndex)..<close]))
                rest = rest[rest.index(after: close)...]
            }
        }
        return paths
    }
}
