import AuthRPCSyntax

/// `application/x-www-form-urlencoded`, the token endpoint's request format, on AuthRPCSyntax's
/// percent codec (which also gives the strict encoding RFC 6749 section 2.3.1 asks for in HTTP
/// Basic client credentials).
enum FormEncoding {
    /// Encodes pairs as `a=b&c=d`, every byte outside `[A-Za-z0-9-._~]` percent-encoded (space as `%20`).
    static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { "\(PercentEncoding.encodeUnreserved($0.0))=\(PercentEncoding.encodeUnreserved($0.1))" }.joined(
            separator: "&"
        )
    }

    /// Splits `a=b&c=d` into decoded pairs, each on its first `=` only; order and duplicates kept.
    static func decode<S: StringProtocol>(_ text: S) -> [(String, String)] {
        text.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            if let equals = pair.firstIndex(of: "=") {
                return (
                    PercentEncoding.decode(pair[..<equals], plusIsSpace: true),
                    PercentEncoding.decode(pair[pair.index(after: equals)...], plusIsSpace: true)
                )
            }
            return (PercentEncoding.decode(pair, plusIsSpace: true), "")
        }
    }
}
