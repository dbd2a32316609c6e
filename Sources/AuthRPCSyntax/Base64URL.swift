/// Base64url (RFC 4648 section 5), as JOSE writes binary values (RFC 7515 section 2): the URL-safe
/// alphabet, padding left out. JWTs, JWK numbers and PKCE values are written in it.
package enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// `bytes` in base64url, without padding.
    package static func encode<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        let bytes = Array(bytes)
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            var chunk = UInt32(bytes[index]) << 16
            if count > 1 { chunk |= UInt32(bytes[index + 1]) << 8 }
            if count > 2 { chunk |= UInt32(bytes[index + 2]) }
            // 1, 2 or 3 bytes are 2, 3 or 4 characters.
            for position in 0...count {
                output.append(alphabet[Int(chunk >> UInt32(18 - position * 6) & 63)])
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bytes `text` encodes; `nil` for a character outside the alphabet, whitespace, a length
    /// no encoding has, or padding that does not complete the last quantum. Padding is accepted,
    /// as other JOSE readers do, though RFC 7515 leaves it out.
    package static func decode<S: StringProtocol>(_ text: S) -> [UInt8]? {
        var characters = Array(text.utf8)[...]
        if characters.count % 4 == 0 {
            var padding = 0
            while padding < 2, characters.last == UInt8(ascii: "=") {
                characters = characters.dropLast()
                padding += 1
            }
        }
        guard characters.count % 4 != 1 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(characters.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bitCount = 0
        for character in characters {
            guard let value = sextet(character) else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bitCount += 6
            if bitCount >= 8 {
                bitCount -= 8
                bytes.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bitCount)))
            }
        }
        return bytes
    }

    private static func sextet(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): return 62
        case UInt8(ascii: "_"): return 63
        default: return nil
        }
    }
}
