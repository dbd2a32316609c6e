/// Makes text that came from elsewhere (servers, issuers, session files) safe to show.
///
/// A peer's text can carry terminal escape sequences (colours, cursor moves, window titles,
/// hyperlinks), carriage returns and line feeds that forge lines the tool never printed, and
/// bidirectional controls that reorder what is read. Every character that is not plain printable
/// text is shown as a visible escape instead: `\x1b`, `\n`, `\r`, `\t`, `\x7f`, `\u{9B}`,
/// `\u{202E}`. The rest of the text is kept as it is, so ordinary output (Unicode names,
/// punctuation, backslashes) reads the same.
enum PrintableText {
    /// The most characters a line of text output shows before it is cut off.
    static let lineLimit = 1024

    /// The most characters a line the user must copy (a URL to open) shows.
    static let copyableLineLimit = 8192

    /// `text` with every unsafe character escaped, and cut to about `limit` characters (the escapes
    /// included) with a note saying how many more there were.
    static func escaping(_ text: some StringProtocol, limit: Int = lineLimit) -> String {
        var result = String.UnicodeScalarView()
        var shown = 0
        var scalars = text.unicodeScalars.makeIterator()
        while let scalar = scalars.next() {
            let escaped = isSafe(scalar) ? nil : escape(scalar)
            let length = escaped?.unicodeScalars.count ?? 1
            if shown + length > limit {
                var left = 1
                while scalars.next() != nil { left += 1 }
                return String(result) + "… (\(left) more characters not shown)"
            }
            if let escaped { result.append(contentsOf: escaped.unicodeScalars) } else { result.append(scalar) }
            shown += length
        }
        return String(result)
    }

    /// Serialized JSON with the characters JSON allows raw but a terminal acts on (DEL, C1
    /// controls, line and paragraph separators, bidirectional controls) written as `\uXXXX`.
    ///
    /// Those characters can only occur inside JSON strings, so the document keeps its meaning: a
    /// JSON reader gets exactly the original strings. Control characters below U+0020 are
    /// already escaped by every JSON encoder.
    static func escapingJSON(_ json: String) -> String {
        guard json.unicodeScalars.contains(where: { !isSafe($0) && $0.value >= 0x20 }) else { return json }
        var result = ""
        for scalar in json.unicodeScalars {
            if isSafe(scalar) || scalar.value < 0x20 {
                result.unicodeScalars.append(scalar)
            } else {
                result += "\\u" + hex(scalar.value, width: 4)
            }
        }
        return result
    }

    /// Whether `scalar` may be written to a terminal as it is.
    static func isSafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00..<0x20, 0x7F:  // C0 controls (ESC, CR, LF, TAB, BEL, BS, ...) and DEL
            return false
        case 0x80...0x9F:  // C1 controls (CSI U+009B, OSC U+009D, ...), which some terminals obey
            return false
        case 0x061C, 0x200E, 0x200F:  // bidirectional marks (ALM, LRM, RLM)
            return false
        case 0x2028, 0x2029:  // line and paragraph separators
            return false
        case 0x202A...0x202E, 0x2066...0x2069:  // bidirectional embeddings, overrides and isolates
            return false
        default:
            return true
        }
    }

    private static func escape(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\n": return "\\n"
        case "\r": return "\\r"
        case "\t": return "\\t"
        default:
            return scalar.value < 0x80
                ? "\\x" + hex(scalar.value, width: 2) : "\\u{" + hex(scalar.value, width: 0, uppercase: true) + "}"
        }
    }

    private static func hex(_ value: UInt32, width: Int, uppercase: Bool = false) -> String {
        let digits = String(value, radix: 16, uppercase: uppercase)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
