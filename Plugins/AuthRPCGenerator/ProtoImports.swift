import Foundation

/// The `import "…";` statements of a `.proto` file, read before protoc runs so that an import
/// no import path provides is reported with the config key that fixes it.
enum ProtoImports {
    /// One import: the line it is on and the path it names.
    struct Import: Equatable {
        var line: Int
        var path: String
    }

    /// The imports of `source`, in order. Comments are skipped; anything else is left to protoc.
    static func imports(in source: String) -> [Import] {
        var found: [Import] = []
        var inBlockComment = false
        for (index, rawLine) in source.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = Substring(rawLine)
            if inBlockComment {
                guard let end = line.range(of: "*/") else { continue }
                line = line[end.upperBound...]
                inBlockComment = false
            }
            if let start = line.range(of: "/*"), line.range(of: "*/", range: start.upperBound..<line.endIndex) == nil {
                inBlockComment = true
                line = line[..<start.lowerBound]
            }
            if let comment = line.range(of: "//") { line = line[..<comment.lowerBound] }
            var words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })[...]
            guard words.first == "import" else { continue }
            words = words.dropFirst()
            if words.first == "public" || words.first == "weak" { words = words.dropFirst() }
            let rest = words.joined(separator: " ")
            guard rest.first == "\"", let close = rest.dropFirst().firstIndex(of: "\"") else { continue }
            found.append(Import(line: index + 1, path: String(rest[rest.index(after: rest.startIndex)..<close])))
        }
        return found
    }

    /// Well-known types: protoc always finds them in its own include directory.
    static func isWellKnown(_ path: String) -> Bool {
        path.hasPrefix("google/protobuf/")
    }
}
