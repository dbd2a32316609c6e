// The grammar of Google's path templates, shared by the runtime (GoogleAPICore, which matches
// routing templates at call time) and the generator (AuthRPCCodeGen, which checks them and reads
// the variables of `google.api.http` paths when it generates a client): one parser, so a template
// the generator accepts is one the runtime can match.

/// A path template, parsed.
///
/// Two kinds share the grammar of `google/api/http.proto`:
///
///     Template = [ "/" ] Segments [ ":" Verb ]   (the "/" and the verb: http paths only)
///     Segments = Segment { "/" Segment }
///     Segment  = "*" | "**" | LITERAL | Variable
///     Variable = "{" FieldPath [ "=" Segments ] "}"   (no variable inside; "{x}" is "{x=*}")
///     FieldPath = IDENT { "." IDENT }
///
/// A routing template (AIP-4222's `path_template`) has exactly one variable, no leading "/" and
/// no verb. Both kinds allow at most one `**`, which is what keeps matching linear.
package struct PathTemplateSyntax: Equatable, Sendable {
    /// One segment, with variables expanded into the segments they match.
    package enum Segment: Equatable, Sendable {
        /// Exactly this text.
        case literal(String)
        /// `*`: one segment, not empty.
        case single
        /// `**`: any number of segments, none included.
        case multi
    }

    /// A variable: the field path it names and the segments it covers.
    package struct Variable: Equatable, Sendable {
        package var fieldPath: String
        package var segments: Range<Int>
    }

    /// Which grammar a template follows.
    package enum Kind: Sendable {
        /// `google.api.routing`'s `path_template`: one variable, no "/" first, no verb.
        case routing
        /// `google.api.http`'s paths: a "/" first, any number of variables, an optional verb.
        case http
    }

    package var segments: [Segment]
    package var variables: [Variable]
    /// The `:verb` of an http path, without the colon.
    package var verb: String?

    /// Parses `template`; the error says where and what is wrong.
    package static func parse(_ template: String, kind: Kind) -> Result<PathTemplateSyntax, PathTemplateSyntaxError> {
        var parser = Parser(text: Array(template.unicodeScalars), template: template, kind: kind)
        do throws(PathTemplateSyntaxError) {
            return .success(try parser.parse())
        } catch {
            return .failure(error)
        }
    }
}

/// Why a path template does not parse.
package struct PathTemplateSyntaxError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The template as written.
    package var template: String
    /// Where the problem is, in Unicode scalars from the start.
    package var offset: Int
    /// What is wrong.
    package var problem: String

    package var description: String {
        "path template \"\(template)\" at offset \(offset): \(problem)"
    }
}

private struct Parser {
    let text: [Unicode.Scalar]
    let template: String
    let kind: PathTemplateSyntax.Kind
    var position = 0
    var segments: [PathTemplateSyntax.Segment] = []
    var variables: [PathTemplateSyntax.Variable] = []
    var inVariable = false

    init(text: [Unicode.Scalar], template: String, kind: PathTemplateSyntax.Kind) {
        self.text = text
        self.template = template
        self.kind = kind
    }

    mutating func parse() throws(PathTemplateSyntaxError) -> PathTemplateSyntax {
        if kind == .http {
            guard peek == "/" else { throw failure("an http path starts with \"/\"") }
            position += 1
        } else if peek == "/" {
            throw failure("a routing template does not start with \"/\"")
        }
        try parseSegments()
        var verb: String?
        if kind == .http, peek == ":" {
            position += 1
            let start = position
            while let scalar = peek, isLiteral(scalar) { position += 1 }
            guard position > start else { throw failure("the verb after \":\" is empty") }
            verb = String(String.UnicodeScalarView(text[start..<position]))
        }
        if let scalar = peek { throw failure("unexpected \"\(scalar)\"") }
        switch kind {
        case .routing:
            guard variables.count == 1 else {
                throw PathTemplateSyntaxError(
                    template: template,
                    offset: 0,
                    problem: "a routing template names exactly one variable ({key=...}), not \(variables.count)"
                )
            }
        case .http:
            var seen = Set<String>()
            for variable in variables where !seen.insert(variable.fieldPath).inserted {
                throw PathTemplateSyntaxError(
                    template: template,
                    offset: 0,
                    problem: "the variable \(variable.fieldPath) appears twice"
                )
            }
        }
        if segments.filter({ $0 == .multi }).count > 1 {
            throw PathTemplateSyntaxError(template: template, offset: 0, problem: "\"**\" appears more than once")
        }
        return PathTemplateSyntax(segments: segments, variables: variables, verb: verb)
    }

    private var peek: Unicode.Scalar? { position < text.count ? text[position] : nil }

    private mutating func parseSegments() throws(PathTemplateSyntaxError) {
        while true {
            try parseSegment()
            guard peek == "/" else { return }
            position += 1
        }
    }

    private mutating func parseSegment() throws(PathTemplateSyntaxError) {
        switch peek {
        case "*":
            position += 1
            if peek == "*" {
                position += 1
                segments.append(.multi)
            } else {
                segments.append(.single)
            }
            if let scalar = peek, scalar != "/", scalar != "}", scalar != ":" {
                throw failure("\"*\" and \"**\" stand alone in their segment")
            }
        case "{":
            guard !inVariable else { throw failure("a variable cannot contain another") }
            position += 1
            let fieldPath = try parseFieldPath()
            let first = segments.count
            if peek == "=" {
                position += 1
                inVariable = true
                try parseSegments()
                inVariable = false
            } else {
                segments.append(.single)
            }
            guard peek == "}" else { throw failure("expected \"}\" to close the variable \(fieldPath)") }
            position += 1
            variables.append(.init(fieldPath: fieldPath, segments: first..<segments.count))
        case let scalar? where isLiteral(scalar):
            let start = position
            while let next = peek, isLiteral(next) { position += 1 }
            segments.append(.literal(String(String.UnicodeScalarView(text[start..<position]))))
        case nil:
            throw failure("a segment is missing at the end")
        case let scalar?:
            throw failure(scalar == "/" ? "a segment is empty" : "a segment cannot start with \"\(scalar)\"")
        }
    }

    private mutating func parseFieldPath() throws(PathTemplateSyntaxError) -> String {
        let start = position
        while true {
            guard let first = peek, first == "_" || isASCIILetter(first) else {
                throw failure("expected a field name")
            }
            position += 1
            while let next = peek, next == "_" || isASCIILetter(next) || isDigit(next) { position += 1 }
            guard peek == "." else { break }
            position += 1
        }
        return String(String.UnicodeScalarView(text[start..<position]))
    }

    /// Characters a literal may hold: anything but the template's own punctuation and controls.
    private func isLiteral(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "/", "{", "}", "*", "=", ":": return kind == .routing && scalar == ":"
        default: return scalar.value > 0x20 && scalar.value != 0x7F
        }
    }

    private func isASCIILetter(_ scalar: Unicode.Scalar) -> Bool {
        (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z")
    }

    private func isDigit(_ scalar: Unicode.Scalar) -> Bool { scalar >= "0" && scalar <= "9" }

    private func failure(_ problem: String) -> PathTemplateSyntaxError {
        PathTemplateSyntaxError(template: template, offset: position, problem: problem)
    }
}
