import AuthRPC
import AuthRPCSyntax

/// `application/x-www-form-urlencoded` (the token endpoint's request format) and the strict
/// percent-encoding RFC 6749 section 2.3.1 asks for in HTTP Basic client credentials.
enum FormEncoding {
    /// Encodes pairs as `a=b&c=d`, every byte outside `[A-Za-z0-9-._~]` percent-encoded (space as `%20`).
    static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { "\(percentEncode($0.0))=\(percentEncode($0.1))" }.joined(separator: "&")
    }

    /// Percent-encodes every byte outside RFC 3986's unreserved set.
    static func percentEncode(_ text: String) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) {
                output.append(byte)
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes `%XX` escapes (and `+` as space when `plusIsSpace`); malformed escapes stay as they are.
    static func percentDecode<S: StringProtocol>(_ text: S, plusIsSpace: Bool = true) -> String {
        PercentEncoding.decode(text, plusIsSpace: plusIsSpace)
    }

    /// Splits `a=b&c=d` into decoded pairs, each on its first `=` only; order and duplicates kept.
    static func decode<S: StringProtocol>(_ text: S) -> [(String, String)] {
        text.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            if let equals = pair.firstIndex(of: "=") {
                return (percentDecode(pair[..<equals]), percentDecode(pair[pair.index(after: equals)...]))
            }
            return (percentDecode(pair), "")
        }
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }
}
