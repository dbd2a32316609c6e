/// Text that came from outside (a `.proto` file's name, a path given to the generator) made safe
/// to put in a `//` comment of the generated source and in an error protoc prints: control
/// characters (C0, DEL, C1) and the Unicode line and paragraph separators become `\u{XX}`, so a
/// name cannot end the comment's line and turn the rest into code, nor move a terminal's cursor.
enum Printable {
    static func text(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if needsEscape(scalar) {
                result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028
            || scalar.value == 0x2029
    }
}
