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

    /// `text` with every byte but RFC 3986's unreserved characters (`A-Z a-z 0-9 - . _ ~`) as
    /// `%XX` (upper-case hex of the UTF-8 bytes): RFC 6570's simple string expansion, which
    /// AIP-4222 asks of routing header keys and values.
    static func encodeUnreserved(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(encodedUnreservedCount(text.utf8))
        encodeUnreserved(text.utf8) { result.unicodeScalars.append(Unicode.Scalar($0)) }
        return result
    }

    /// The length ``encodeUnreserved(_:)`` gives `bytes`.
    static func encodedUnreservedCount<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> Int {
        var count = 0
        for byte in bytes { count += isUnreserved(byte) ? 1 : 3 }
        return count
    }

    /// Hands the encoded form of `bytes` to `put`, byte by byte.
    static func encodeUnreserved<Bytes: Sequence<UInt8>>(_ bytes: Bytes, _ put: (UInt8) -> Void) {
        let hex: StaticString = "0123456789ABCDEF"
        for byte in bytes {
            if isUnreserved(byte) {
                put(byte)
            } else {
                put(UInt8(ascii: "%"))
                put(hex.utf8Start[Int(byte >> 4)])
                put(hex.utf8Start[Int(byte & 0x0F)])
            }
        }
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            return true
        default:
            return false
        }
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
