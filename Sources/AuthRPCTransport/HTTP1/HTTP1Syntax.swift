/// The pieces of HTTP/1.1's message syntax (RFC 9112, RFC 9110 section 5) that both a proxy's
/// answer to CONNECT and a server's response are read with.
enum HTTP1Syntax {
    /// The status of `HTTP/1.x NNN[ reason]`, or nil when the line is not one.
    static func statusCode(_ line: ArraySlice<UInt8>) -> Int? {
        let bytes = Array(line)
        guard bytes.count >= 12, bytes.starts(with: Array("HTTP/1.".utf8)),
            bytes[7] == UInt8(ascii: "0") || bytes[7] == UInt8(ascii: "1"),
            bytes[8] == UInt8(ascii: " "),
            bytes.count == 12 || bytes[12] == UInt8(ascii: " ")
        else { return nil }
        var code = 0
        for byte in bytes[9..<12] {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            code = code * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return code >= 100 ? code : nil
    }

    /// `name: value` taken apart (the value without surrounding spaces and tabs), or nil when the
    /// name is not a token, the line starts with white space (obs-fold, refused as RFC 9112
    /// section 5.2 allows), or the value holds NUL, CR or LF.
    static func field(_ line: ArraySlice<UInt8>) -> (name: String, value: String)? {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
            line[line.startIndex..<colon].allSatisfy(isTokenByte)
        else { return nil }
        var value = line[(colon + 1)...]
        while let first = value.first, first == UInt8(ascii: " ") || first == 9 { value = value.dropFirst() }
        while let last = value.last, last == UInt8(ascii: " ") || last == 9 { value = value.dropLast() }
        guard !value.contains(where: { $0 == 0 || $0 == 10 || $0 == 13 }) else { return nil }
        return (String(decoding: line[line.startIndex..<colon], as: UTF8.self), String(decoding: value, as: UTF8.self))
    }

    /// A peer's number in `radix` 10 or 16: one to `maximumDigits` digits and nothing else (no
    /// sign, no white space, no `0x`), or nil. `Int(_:radix:)` alone would take `-1` and `+1`.
    static func number(_ bytes: some Collection<UInt8>, radix: Int, maximumDigits: Int) -> Int? {
        guard !bytes.isEmpty, bytes.count <= maximumDigits else { return nil }
        var value = 0
        for byte in bytes {
            let digit: Int
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = Int(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f") where radix == 16: digit = Int(byte - UInt8(ascii: "a")) + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F") where radix == 16: digit = Int(byte - UInt8(ascii: "A")) + 10
            default: return nil
            }
            let (product, overflow) = value.multipliedReportingOverflow(by: radix)
            guard !overflow else { return nil }
            value = product + digit
        }
        return value
    }

    /// RFC 9110's `tchar`.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
