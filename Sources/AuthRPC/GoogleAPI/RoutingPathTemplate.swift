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
    private enum Element: Sendable, Hashable {
        case literal([UInt8])
        case single
        case multi
    }

    /// The header key: the name of the template's variable.
    public let key: String
    /// The template as written (`{key=**}` for ``wholeValue(key:)``).
    public let description: String

    private let elements: [Element]
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
        self.init(
            key: variable.fieldPath,
            description: template,
            elements: syntax.segments.map { segment in
                switch segment {
                case .literal(let text): .literal(Array(text.utf8))
                case .single: .single
                case .multi: .multi
                }
            },
            capture: variable.segments
        )
    }

    /// The template of a routing parameter without one: the whole field, under `key`
    /// (`{key=**}`).
    public static func wholeValue(key: String) -> RoutingPathTemplate {
        RoutingPathTemplate(key: key, description: "{\(key)=**}", elements: [.multi], capture: 0..<1)
    }

    private init(key: String, description: String, elements: [Element], capture: Range<Int>) {
        self.key = key
        self.description = description
        self.elements = elements
        self.capture = capture
        self.multi = elements.firstIndex(of: .multi)
    }

    /// The part of `value` the variable covers, when the whole of `value` matches the template;
    /// `nil` when it does not. The result may be empty (a variable of `**` alone over nothing).
    ///
    /// One pass over the bytes, without allocating.
    public func match(_ value: String) -> Substring? {
        let utf8 = value.utf8
        var slashes = 0
        for byte in utf8 where byte == UInt8(ascii: "/") { slashes += 1 }
        let segmentCount = slashes + 1
        let count = elements.count
        if multi == nil {
            guard segmentCount == count else { return nil }
        } else {
            guard segmentCount >= count - 1 else { return nil }
        }

        var captureStart: String.Index?
        var captureEnd = utf8.startIndex
        var start = utf8.startIndex
        for index in 0..<segmentCount {
            var end = start
            while end != utf8.endIndex, utf8[end] != UInt8(ascii: "/") { end = utf8.index(after: end) }
            let element = elementIndex(ofSegment: index, segmentCount: segmentCount)
            switch elements[element] {
            case .literal(let bytes):
                guard utf8[start..<end].elementsEqual(bytes) else { return nil }
            case .single:
                guard start != end else { return nil }
            case .multi:
                break
            }
            if capture.contains(element) {
                if captureStart == nil { captureStart = start }
                captureEnd = end
            }
            start = end == utf8.endIndex ? end : utf8.index(after: end)
        }
        // Only a `**` that met no segment was captured: the variable is empty.
        guard let captureStart else { return value[value.endIndex...] }
        return value[captureStart..<captureEnd]
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

    public static func == (lhs: RoutingPathTemplate, rhs: RoutingPathTemplate) -> Bool {
        lhs.key == rhs.key && lhs.elements == rhs.elements && lhs.capture == rhs.capture
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(key)
        hasher.combine(elements)
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
