/// Base64 (RFC 4648): one codec for both alphabets the project reads and writes, the standard
/// one (section 4: gRPC's `-bin` metadata, HTTP Basic credentials) and the URL-safe one
/// (section 5: JOSE, PKCE, through ``Base64URL``).
package struct Base64Codec: Sendable {
    private let alphabet: [UInt8]
    private let decodeTable: [UInt8]

    private init(_ alphabet: String) {
        self.alphabet = Array(alphabet.utf8)
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in self.alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        decodeTable = table
    }

    /// RFC 4648 section 4: `+` and `/`.
    package static let standard = Self("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
    /// RFC 4648 section 5: `-` and `_`.
    package static let url = Self("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")

    /// `bytes` encoded, with `=` padding to a multiple of four characters when `padded`.
    package func encode<Bytes: Collection<UInt8>>(_ bytes: Bytes, padded: Bool) -> String {
        let bytes = Array(bytes)
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
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
            if padded, count < 3 { output.append(contentsOf: repeatElement(UInt8(ascii: "="), count: 3 - count)) }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bytes `text` encodes, padded or not; `nil` for a character outside the alphabet,
    /// whitespace, a length no encoding has, or padding that does not complete the last quantum.
    /// Leftover bits need not be zero, as lenient readers (gRPC's among them) accept.
    package func decode<S: StringProtocol>(_ text: S) -> [UInt8]? {
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
            let value = decodeTable[Int(character)]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bitCount += 6
            if bitCount >= 8 {
                bitCount -= 8
                bytes.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bitCount)))
            }
        }
        return bytes
    }
}
