/// Percent-decoding: `grpc-message` is percent-encoded UTF-8 (servers send bytes outside
/// printable ASCII, and `%` itself, as `%XX`); OAuth's form bodies and redirect queries are too.
package enum PercentEncoding {
    /// Decodes a `grpc-message`: `%XX` escapes only. Never fails and never trims.
    package static func decodeMessage(_ text: String) -> String {
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
    package static func encodeUnreserved(_ text: String) -> String {
        var text = text
        return text.withUTF8 { bytes in
            String(unsafeUninitializedCapacity: encodedUnreservedCount(bytes)) { output in
                encodeUnreserved(bytes, into: output, at: 0)
            }
        }
    }

    /// The length ``encodeUnreserved(_:)`` gives `bytes`.
    package static func encodedUnreservedCount(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var count = 0
        for byte in bytes { count += isUnreserved(byte) ? 1 : 3 }
        return count
    }

    /// Writes the encoded form of `bytes` into `output` from `offset`, which must leave room for
    /// ``encodedUnreservedCount(_:)`` bytes; returns the offset after them.
    package static func encodeUnreserved(
        _ bytes: UnsafeBufferPointer<UInt8>,
        into output: UnsafeMutableBufferPointer<UInt8>,
        at offset: Int
    ) -> Int {
        var written = offset
        for byte in bytes {
            if isUnreserved(byte) {
                output[written] = byte
                written += 1
            } else {
                output[written] = UInt8(ascii: "%")
                output[written + 1] = hexDigit(byte >> 4)
                output[written + 2] = hexDigit(byte & 0x0F)
                written += 3
            }
        }
        return written
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10
    }

    /// RFC 3986's unreserved characters, as a bit per ASCII byte (`A-Z a-z 0-9 - . _ ~`).
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        // Bits 45 (-), 46 (.), 48-57 (0-9) of the low half; 65-90 (A-Z), 95 (_), 97-122 (a-z), 126 (~)
        // of the high half.
        let low: UInt64 = 0x03FF_6000_0000_0000
        let high: UInt64 = 0x47FF_FFFE_87FF_FFFE
        switch byte {
        case 0..<64: return low >> UInt64(byte) & 1 == 1
        case 64..<128: return high >> UInt64(byte - 64) & 1 == 1
        default: return false
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
