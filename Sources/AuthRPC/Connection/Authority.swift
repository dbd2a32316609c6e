/// The syntax of what becomes a request's `:authority` (RFC 9113 section 8.3.1: RFC 3986's
/// authority without userinfo): `host[:port]`, where the host is a registered name or an IP
/// address (IPv6 in brackets). Checked before anything is sent, so no caller-supplied text can
/// smuggle CR/LF, spaces or a `user@` into a header.
enum Authority {
    /// What is wrong with `text` as `host[:port]`, or `nil` when nothing is.
    static func problem(in text: String) -> String? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { return "it is empty" }
        var hostEnd: Int
        if bytes[0] == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")) else {
                return "the IPv6 address has no closing ']'"
            }
            if let problem = ipv6Problem(bytes[1..<close]) { return problem }
            hostEnd = close + 1
        } else {
            hostEnd = bytes.firstIndex(of: UInt8(ascii: ":")) ?? bytes.count
            if let problem = registeredNameProblem(bytes[0..<hostEnd], offset: 0) { return problem }
        }
        guard hostEnd < bytes.count else { return nil }
        guard bytes[hostEnd] == UInt8(ascii: ":") else {
            return describe(bytes[hostEnd], at: hostEnd, "after the host")
        }
        return portProblem(bytes[(hostEnd + 1)...])
    }

    /// What is wrong with `text` as a bare host (a registered name, an IPv4 address, or an IPv6
    /// address without brackets), or `nil` when nothing is.
    static func hostProblem(in text: String) -> String? {
        let bytes = Array(text.utf8)
        return bytes.contains(UInt8(ascii: ":"))
            ? ipv6Problem(bytes[...]) : registeredNameProblem(bytes[...], offset: 0)
    }

    /// RFC 3986 reg-name: unreserved, sub-delims and %XX escapes (IPv4 addresses fit it too).
    private static func registeredNameProblem(_ host: ArraySlice<UInt8>, offset: Int) -> String? {
        guard !host.isEmpty else { return "the host is empty" }
        var index = host.startIndex
        while index < host.endIndex {
            let byte = host[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < host.endIndex, isHex(host[index + 1]), isHex(host[index + 2]) else {
                    return "'%' at offset \(index) is not followed by two hex digits"
                }
                index += 3
                continue
            }
            guard isUnreserved(byte) || subDelimiters.utf8.contains(byte) else {
                return describe(
                    byte,
                    at: index,
                    byte == UInt8(ascii: "@") ? "(userinfo is not allowed)" : "in the host"
                )
            }
            index += 1
        }
        return nil
    }

    private static func ipv6Problem(_ address: ArraySlice<UInt8>) -> String? {
        guard address.contains(UInt8(ascii: ":")) else { return "the address in brackets is not an IPv6 address" }
        for index in address.indices
        where !(isHex(address[index]) || address[index] == UInt8(ascii: ":") || address[index] == UInt8(ascii: ".")) {
            return describe(address[index], at: index, "in the IPv6 address")
        }
        return nil
    }

    private static func portProblem(_ port: ArraySlice<UInt8>) -> String? {
        guard (1...5).contains(port.count), port.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let value = Int(String(decoding: port, as: UTF8.self)), value <= 65535
        else {
            return "the port must be a number from 0 to 65535"
        }
        return nil
    }

    private static let subDelimiters = "!$&'()*+,;="

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || "-._~".utf8.contains(byte)
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "F"))
    }

    /// A byte named so that the message stays printable whatever the byte is.
    static func describe(_ byte: UInt8, at offset: Int, _ context: String) -> String {
        "\(name(of: byte)) at offset \(offset) is not allowed \(context)"
    }

    private static func name(of byte: UInt8) -> String {
        if byte > 0x20 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        if byte == 0x20 { return "a space" }
        let hex = String(byte, radix: 16, uppercase: true)
        return "byte 0x" + (hex.count == 1 ? "0" + hex : hex)
    }
}
