/// Peer or caller bytes made safe to put in an error message: visible ASCII and spaces stay,
/// every other byte (controls, escapes, DEL, anything past ASCII) becomes `\xNN`, and the text is
/// cut at a limit. A proxy's answer, an address a user typed: whatever reaches a terminal or a
/// log from here cannot move the cursor, forge a line or hide text.
package enum Printable {
    /// `bytes` as one printable line of at most `limit` bytes (then `...`).
    package static func bytes<Bytes: Collection<UInt8>>(_ bytes: Bytes, limit: Int) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(min(bytes.count, limit) + 4)
        for byte in bytes {
            if output.count >= limit {
                return String(decoding: output, as: UTF8.self) + "..."
            }
            if byte >= 0x20 && byte < 0x7F {
                output.append(byte)
            } else {
                output.append(contentsOf: Array("\\x".utf8))
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// `text`'s UTF-8 bytes as ``bytes(_:limit:)`` shows them.
    package static func text(_ text: String, limit: Int) -> String {
        bytes(text.utf8, limit: limit)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
