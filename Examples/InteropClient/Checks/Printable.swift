/// Text from a server as the terminal may show it: control, format and separator characters
/// (escape sequences, bidi overrides, line separators) as visible `\u{…}` escapes, tabs and line
/// ends as `\t`, `\r`, `\n`, and at most 1024 characters.
enum Printable {
    static let limit = 1024

    /// `text`, escaped and bounded.
    static func text(_ text: String) -> String {
        var result = ""
        var count = 0
        for character in text {
            guard count < limit else {
                return result + "… (\(text.count - limit) more characters)"
            }
            count += 1
            for scalar in character.unicodeScalars {
                switch scalar {
                case "\t": result += "\\t"
                case "\n": result += "\\n"
                case "\r": result += "\\r"
                case "\\": result += "\\\\"
                default:
                    switch scalar.properties.generalCategory {
                    case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .surrogate, .unassigned:
                        result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
                    default:
                        result.unicodeScalars.append(scalar)
                    }
                }
            }
        }
        return result
    }

    /// `text`, escaped, in double quotes.
    static func quoted(_ text: String) -> String { "\"\(Self.text(text))\"" }
}
