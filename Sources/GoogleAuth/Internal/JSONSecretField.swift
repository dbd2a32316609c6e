import AuthRPCSystem

/// Takes one string member out of a JSON object's bytes before the object is parsed, so a private
/// key never becomes a Swift string: its decoded text goes into ``SecretBytes`` (cleared when
/// released), and its place in the document is blanked with spaces (still a valid JSON string, so
/// the rest parses as before).
///
/// Only members of the top-level object are looked at; every occurrence of the name is blanked and
/// the last one is taken (as JSON parsers that keep the last duplicate do). On anything that is not
/// a well-formed object the bytes are left alone and nothing is taken: the JSON parser that runs
/// next reports the error.
enum JSONSecretField {
    /// The decoded value of the top-level member `name`, blanked in `document`; `nil` when the
    /// document has no such string member or is not a well-formed object.
    static func take(_ name: String, from document: SecretBytes) -> SecretBytes? {
        document.withUnsafeMutableBytes { bytes in
            var scanner = Scanner(bytes: UnsafeRawBufferPointer(bytes))
            guard let spans = scanner.stringMembers(named: Array(name.utf8)), let last = spans.last else { return nil }
            guard let value = decode(UnsafeRawBufferPointer(rebasing: bytes[last])) else { return nil }
            for span in spans {
                for index in span { bytes[index] = UInt8(ascii: " ") }
            }
            return value
        }
    }

    /// The JSON string body `raw` (between its quotes) with its escapes decoded.
    private static func decode(_ raw: UnsafeRawBufferPointer) -> SecretBytes? {
        // Decoding never makes the text longer.
        let output = SecretBytes(capacity: raw.count)
        let filled = output.fill { out -> Int? in
            var written = 0
            var index = 0
            func emit(_ byte: UInt8) {
                out[written] = byte
                written += 1
            }
            while index < raw.count {
                let byte = raw[index]
                index += 1
                guard byte == UInt8(ascii: "\\") else {
                    emit(byte)
                    continue
                }
                guard index < raw.count else { return nil }
                let escape = raw[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): emit(escape)
                case UInt8(ascii: "b"): emit(0x08)
                case UInt8(ascii: "f"): emit(0x0C)
                case UInt8(ascii: "n"): emit(0x0A)
                case UInt8(ascii: "r"): emit(0x0D)
                case UInt8(ascii: "t"): emit(0x09)
                case UInt8(ascii: "u"):
                    // Keys are ASCII; a \u escape of anything else is not a PEM key, and is
                    // left to the JSON parser's error.
                    guard index + 4 <= raw.count, let unit = hexValue(raw, index), unit < 0x80 else { return nil }
                    index += 4
                    emit(UInt8(unit))
                default:
                    return nil
                }
            }
            return written
        }
        return filled ? output : nil
    }

    private static func hexValue(_ raw: UnsafeRawBufferPointer, _ start: Int) -> Int? {
        var value = 0
        for offset in 0..<4 {
            let byte = raw[start + offset]
            let digit: Int
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = Int(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = Int(byte - UInt8(ascii: "a")) + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = Int(byte - UInt8(ascii: "A")) + 10
            default: return nil
            }
            value = value * 16 + digit
        }
        return value
    }

    /// A forward-only reader of a JSON document's top-level object.
    private struct Scanner {
        let bytes: UnsafeRawBufferPointer
        var index = 0
        /// Nesting deeper than this is refused (the parser reports it), so the skip cannot recurse
        /// without bound.
        static let maximumDepth = 64

        init(bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
        }

        /// The byte ranges (inside the quotes) of every top-level string member called `name`;
        /// `nil` when the document is not a well-formed object.
        mutating func stringMembers(named name: [UInt8]) -> [Range<Int>]? {
            var spans: [Range<Int>] = []
            skipWhitespace()
            guard take(UInt8(ascii: "{")) else { return nil }
            skipWhitespace()
            if take(UInt8(ascii: "}")) { return finished() ? spans : nil }
            while true {
                skipWhitespace()
                guard let key = string() else { return nil }
                skipWhitespace()
                guard take(UInt8(ascii: ":")) else { return nil }
                skipWhitespace()
                if peek == UInt8(ascii: "\"") {
                    guard let value = string() else { return nil }
                    if bytes[key].elementsEqual(name) { spans.append(value) }
                } else {
                    guard skipValue(depth: 1) else { return nil }
                }
                skipWhitespace()
                if take(UInt8(ascii: ",")) { continue }
                guard take(UInt8(ascii: "}")) else { return nil }
                return finished() ? spans : nil
            }
        }

        private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        private mutating func take(_ byte: UInt8) -> Bool {
            guard peek == byte else { return false }
            index += 1
            return true
        }

        private mutating func finished() -> Bool {
            skipWhitespace()
            return index == bytes.count
        }

        private mutating func skipWhitespace() {
            while let byte = peek, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        /// A string's body range (its raw bytes, escapes undecoded); `nil` if it is not a string.
        private mutating func string() -> Range<Int>? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            while let byte = peek {
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return start..<(index - 1)
                }
                if byte < 0x20 { return nil }
                index += byte == UInt8(ascii: "\\") ? 2 : 1
            }
            return nil
        }

        /// Skips one value that is not a string: an object, an array, a number or a literal.
        private mutating func skipValue(depth: Int) -> Bool {
            guard depth <= Self.maximumDepth, let byte = peek else { return false }
            switch byte {
            case UInt8(ascii: "\""):
                return string() != nil
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let close = byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
                index += 1
                skipWhitespace()
                if take(close) { return true }
                while true {
                    skipWhitespace()
                    if close == UInt8(ascii: "}") {
                        guard string() != nil else { return false }
                        skipWhitespace()
                        guard take(UInt8(ascii: ":")) else { return false }
                        skipWhitespace()
                    }
                    guard skipValue(depth: depth + 1) else { return false }
                    skipWhitespace()
                    if take(UInt8(ascii: ",")) { continue }
                    return take(close)
                }
            default:
                // A number or a literal: the bytes up to a delimiter (the parser checks them).
                let start = index
                while let next = peek,
                    ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x0A, 0x0D, 0x09]
                        .contains(next)
                {
                    index += 1
                }
                return index > start
            }
        }
    }
}
