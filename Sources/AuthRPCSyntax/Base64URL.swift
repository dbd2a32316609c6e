/// Base64url (RFC 4648 section 5), as JOSE writes binary values (RFC 7515 section 2): the URL-safe
/// alphabet, padding left out.
enum Base64URL {
    /// The bytes `text` encodes; `nil` for a character outside the alphabet, whitespace, a length
    /// no encoding has, or padding that does not complete the last quantum. Padding is accepted,
    /// as other JOSE readers do, though RFC 7515 leaves it out.
    static func decode(_ text: String) -> [UInt8]? {
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
