import Foundation

/// The `import "…";` statements of a `.proto` file, read before protoc runs so that an import
/// no import path provides is reported with the config key that fixes it, and so that the files
/// reached through `importPaths` can be generated too.
enum ProtoImports {
    /// One import: the line it is on and the path it names.
    struct Import: Equatable {
        var line: Int
        var path: String
    }

    /// The imports of `source`, in order.
    ///
    /// The source is read as protoc's tokenizer reads it: `//` comments to the end of the line,
    /// `/* */` comments, and string literals (in which neither starts a comment) are told apart
    /// in one pass, so a `/*` inside a `//` comment or a string hides nothing. An import is the
    /// word `import` at the start of a statement, an optional `public` or `weak`, a string and
    /// `;`. Anything else is left to protoc.
    static func imports(in source: String) -> [Import] {
        var found: [Import] = []
        var tokens = Tokenizer(source.unicodeScalars)
        var atStatementStart = true
        while var token = tokens.next() {
            if atStatementStart, token.kind == .word("import") {
                let line = token.line
                var path: String?
                var parts = 0
                while let next = tokens.next() {
                    token = next
                    parts += 1
                    switch (parts, next.kind) {
                    case (1, .word("public")), (1, .word("weak")):
                        parts = 0
                        continue
                    case (1, .string(let text)):
                        path = text
                        continue
                    case (2, .symbol(";")):
                        if let path { found.append(Import(line: line, path: path)) }
                    default:
                        break
                    }
                    break
                }
            }
            atStatementStart = token.isStatementEnd
        }
        return found
    }

    /// Well-known types: protoc always finds them in its own include directory.
    static func isWellKnown(_ path: String) -> Bool {
        path.hasPrefix("google/protobuf/")
    }
}

/// The tokens of a `.proto` file that matter for finding imports.
private struct Token {
    enum Kind: Equatable {
        case word(String)
        case string(String)
        case symbol(Unicode.Scalar)
    }

    var kind: Kind
    var line: Int

    /// `;`, `{` and `}` end a statement (or open a body whose first statement follows).
    var isStatementEnd: Bool {
        switch kind {
        case .symbol(";"), .symbol("{"), .symbol("}"): true
        default: false
        }
    }
}

private struct Tokenizer {
    let scalars: [Unicode.Scalar]
    var index = 0
    var line = 1

    init(_ scalars: String.UnicodeScalarView) {
        self.scalars = Array(scalars)
    }

    private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        index + offset < scalars.count ? scalars[index + offset] : nil
    }

    private mutating func advance() {
        if scalars[index] == "\n" { line += 1 }
        index += 1
    }

    mutating func next() -> Token? {
        while let scalar = peek() {
            if scalar == "/" && peek(1) == "/" {
                while let next = peek(), next != "\n" { advance() }
            } else if scalar == "/" && peek(1) == "*" {
                advance()
                advance()
                while peek() != nil, !(peek() == "*" && peek(1) == "/") { advance() }
                if peek() != nil {
                    advance()
                    advance()
                }
            } else if scalar.properties.isWhitespace {
                advance()
            } else if scalar == "\"" || scalar == "'" {
                return string(quote: scalar)
            } else if scalar == "_" || scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) {
                let start = index
                let line = self.line
                while let next = peek(),
                    next == "_" || next == "." || next.properties.isAlphabetic
                        || ("0"..."9").contains(next)
                {
                    advance()
                }
                return Token(kind: .word(String(String.UnicodeScalarView(scalars[start..<index]))), line: line)
            } else {
                let line = self.line
                advance()
                return Token(kind: .symbol(scalar), line: line)
            }
        }
        return nil
    }

    /// A string literal; escapes are kept as written (import paths have none).
    private mutating func string(quote: Unicode.Scalar) -> Token {
        let line = self.line
        advance()
        var text = String.UnicodeScalarView()
        while let scalar = peek(), scalar != quote, scalar != "\n" {
            if scalar == "\\", let escaped = peek(1), escaped != "\n" {
                text.append(scalar)
                advance()
                text.append(escaped)
                advance()
                continue
            }
            text.append(scalar)
            advance()
        }
        if peek() == quote { advance() }
        return Token(kind: .string(String(text)), line: line)
    }
}
