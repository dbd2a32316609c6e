import AuthRPCSyntax

/// A routing path template (AIP-4222, `google.api.RoutingParameter.path_template`), compiled
/// once and matched against request fields at call time without regular expressions.
///
/// A template names one variable, the header key, and says which part of the field is its value:
/// `"projects/*/{table_location=instances/*}/tables/*"` matches
/// `projects/p/instances/i/tables/t` whole and yields `table_location` = `instances/i`. `*`
/// matches one segment that is not empty, `**` any number of segments (none included, so
/// `"{project=projects/*}/**"` also matches `projects/p`), anything else itself. `{key}` is
/// `{key=*}`. A template may hold `**` once.
///
/// ```swift
/// let template = try RoutingPathTemplate("{routing_id=projects/*}/**")
/// template.key                                        // "routing_id"
/// template.match("projects/p/instances/i")            // "projects/p"
/// template.match("regions/r")                         // nil
/// ```
public struct RoutingPathTemplate: Sendable, Hashable, CustomStringConvertible {
    /// One segment of the template. Plain values (a literal's bytes live in `literals`), so
    /// matching copies nothing that is reference-counted.
    private enum Element: Sendable, Hashable {
        case literal(start: Int, count: Int)
        case single
        case multi
    }

    /// The header key: the name of the template's variable.
    public let key: String
    /// The template as written (`{key=**}` for ``wholeValue(key:)``).
    public let description: String

    private let elements: [Element]
    /// The bytes of every literal segment, one after another.
    private let literals: [UInt8]
    /// Which elements the variable covers.
    private let capture: Range<Int>
    /// Where `**` is, if anywhere.
    private let multi: Int?

    /// Compiles `template`.
    ///
    /// - Throws: ``RoutingTemplateError`` when the text is not a routing template: a syntax
    ///   error, no variable or more than one, or `**` more than once.
    public init(_ template: String) throws(RoutingTemplateError) {
        let syntax: PathTemplateSyntax
        switch PathTemplateSyntax.parse(template, kind: .routing) {
        case .success(let parsed): syntax = parsed
        case .failure(let error): throw RoutingTemplateError(template: template, problem: error.description)
        }
        let variable = syntax.variables[0]
        var literals: [UInt8] = []
        let elements = syntax.segments.map { segment -> Element in
            switch segment {
            case .literal(let text):
                defer { literals += text.utf8 }
                return .literal(start: literals.count, count: text.utf8.count)
            case .single: return .single
            case .multi: return .multi
            }
        }
        self.init(
            key: variable.fieldPath,
            description: template,
            elements: elements,
            literals: literals,
            capture: variable.segments
        )
    }

    /// The template of a routing parameter without one: the whole field, under `key`
    /// (`{key=**}`).
    public static func wholeValue(key: String) -> RoutingPathTemplate {
        RoutingPathTemplate(key: key, description: "{\(key)=**}", elements: [.multi], literals: [], capture: 0..<1)
    }

    private init(key: String, description: String, elements: [Element], literals: [UInt8], capture: Range<Int>) {
        self.key = key
        self.description = description
        self.elements = elements
        self.literals = literals
        self.capture = capture
        self.multi = elements.firstIndex(of: .multi)
    }

    /// The part of `value` the variable covers, when the whole of `value` matches the template;
    /// `nil` when it does not. The result may be empty (a variable of `**` alone over nothing).
    public func match(_ value: String) -> Substring? {
        var value = value
        guard let range = value.withUTF8({ matchedRange(in: $0) }) else { return nil }
        let utf8 = value.utf8
        let lower = utf8.index(utf8.startIndex, offsetBy: range.lowerBound)
        return value[lower..<utf8.index(lower, offsetBy: range.count)]
    }

    /// The offsets of the bytes the variable covers, when the whole of `bytes` (UTF-8) matches
    /// the template; `nil` when it does not.
    ///
    /// Two passes over the bytes (one counts the segments, one matches them), without
    /// allocating: this runs at the start of every routed call.
    func matchedRange(in bytes: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        var slashes = 0
        for byte in bytes where byte == UInt8(ascii: "/") { slashes += 1 }
        let segmentCount = slashes + 1
        if multi == nil {
            guard segmentCount == elements.count else { return nil }
        } else {
            guard segmentCount >= elements.count - 1 else { return nil }
        }

        return literals.withUnsafeBufferPointer { literals -> Range<Int>? in
            var captureStart = -1
            var captureEnd = 0
            var start = 0
            for index in 0..<segmentCount {
                var end = start
                while end < bytes.count, bytes[end] != UInt8(ascii: "/") { end += 1 }
                let element = elementIndex(ofSegment: index, segmentCount: segmentCount)
                switch elements[element] {
                case .literal(let literalStart, let count):
                    guard end - start == count else { return nil }
                    for offset in 0..<count where bytes[start + offset] != literals[literalStart + offset] {
                        return nil
                    }
                case .single:
                    guard start != end else { return nil }
                case .multi:
                    break
                }
                if capture.contains(element) {
                    if captureStart < 0 { captureStart = start }
                    captureEnd = end
                }
                start = end + 1
            }
            // Only a `**` that met no segment was captured: the variable is empty.
            guard captureStart >= 0 else { return bytes.count..<bytes.count }
            return captureStart..<captureEnd
        }
    }

    /// The element that value segment `index` (of `segmentCount`) meets: the elements before
    /// `**` take the first segments, those after it the last, `**` the rest.
    private func elementIndex(ofSegment index: Int, segmentCount: Int) -> Int {
        guard let multi else { return index }
        if index < multi { return index }
        let suffix = elements.count - multi - 1
        if index >= segmentCount - suffix { return index - segmentCount + elements.count }
        return multi
    }

    /// Whether two templates match the same values and capture the same part under the same key
    /// (however they were written).
    public static func == (lhs: RoutingPathTemplate, rhs: RoutingPathTemplate) -> Bool {
        lhs.key == rhs.key && lhs.elements == rhs.elements && lhs.literals == rhs.literals
            && lhs.capture == rhs.capture
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(key)
        hasher.combine(elements)
        hasher.combine(literals)
        hasher.combine(capture)
    }
}

/// A routing template that does not compile: the template and what is wrong with it.
public struct RoutingTemplateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The template as written.
    public var template: String
    /// What is wrong, with where.
    public var problem: String

    /// The problem, which names the template.
    public var description: String { problem }
}
