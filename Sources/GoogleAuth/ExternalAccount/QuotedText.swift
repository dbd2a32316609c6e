import Foundation

/// Text from a subject-token source (an executable's message, a URL's error body) made fit to
/// quote in an error: every control, bidirectional or line-separator character shown as an
/// escape, at most ``limit`` characters, and any of the values to hide replaced by `<redacted>`.
enum QuotedText {
    /// The most characters quoted.
    static let limit = 200

    static func quote(_ text: some StringProtocol, hiding secrets: [String] = []) -> String {
        var text = String(text)
        for secret in secrets where !secret.isEmpty {
            text = text.replacingOccurrences(of: secret, with: "<redacted>")
        }
        var result = ""
        var shown = 0
        for scalar in text.unicodeScalars {
            let piece = isSafe(scalar) ? String(scalar) : escape(scalar)
            if shown + piece.unicodeScalars.count > limit { return result + "…" }
            result += piece
            shown += piece.unicodeScalars.count
        }
        return result
    }

    private static func isSafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00..<0x20, 0x7F, 0x80...0x9F: return false
        case 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: return false
        default: return true
        }
    }

    private static func escape(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\n": return "\\n"
        case "\r": return "\\r"
        case "\t": return "\\t"
        default: return "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
        }
    }
}
