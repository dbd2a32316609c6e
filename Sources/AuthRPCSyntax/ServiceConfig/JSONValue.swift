/// A parsed JSON value, whichever parser read it: the runtime converts SwiftProtobuf's
/// `Google_Protobuf_Value` to it, the code generator Foundation's decoding, so that one
/// ``ServiceConfigValidator`` checks both. Numbers are doubles, as in both parsers.
package enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// What the value is, for an error message (strings shown bounded and printable).
    var kind: String {
        switch self {
        case .string(let text): "the string \"\(Self.shown(text))\""
        case .number(let number): "the number \(number)"
        case .bool(let flag): "\(flag)"
        case .object: "an object"
        case .array: "an array"
        case .null: "null"
        }
    }

    /// Text from a document as an error shows it: at most 64 characters, controls escaped, so a
    /// hostile document cannot flood or rewrite a log.
    static func shown(_ text: String) -> String {
        var shown = ""
        for scalar in text.unicodeScalars.prefix(64) {
            shown += scalar.properties.generalCategory == .control ? scalar.escaped(asASCII: true) : String(scalar)
        }
        return text.unicodeScalars.count > 64 ? shown + "..." : shown
    }
}
