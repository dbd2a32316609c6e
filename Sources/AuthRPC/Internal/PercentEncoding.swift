/// Percent-decoding: `grpc-message` is percent-encoded UTF-8 (servers send bytes outside
/// printable ASCII, and `%` itself, as `%XX`); OAuth's form bodies and redirect queries are too.
package enum PercentEncoding {
    /// Decodes a `grpc-message`: `%XX` escapes only. Never fails and never trims.
    static func decodeMessage(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return text }
        return decode(text, plusIsSpace: false)
    }

    /// Decodes `%XX` escapes (and `+` as a space when `plusIsSpace`, as in form bodies); a
    /// malformed escape is kept as written, and bytes that are not valid UTF-8 become U+FFFD.
    package static func decode<S: StringProtocol>(_ text: S, plusIsSpace: Bool) -> String {
        let input = Array(text.utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(input.count)
        var index = 0
        while index < input.count {
            let byte = input[index]
            if byte == UInt8(ascii: "%"), index + 2 < input.count,
                let high = hexValue(input[index + 1]), let low = hexValue(input[index + 2])
            {
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
