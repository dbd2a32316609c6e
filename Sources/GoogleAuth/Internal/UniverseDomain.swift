import Foundation
import OAuth2

/// What a universe domain may be, wherever it comes from (a credential file's `universe_domain`,
/// `GOOGLE_CLOUD_UNIVERSE_DOMAIN`, the metadata server, a caller): a DNS name, since it becomes
/// the last labels of every endpoint's host (`sts.<universe>`, `iamcredentials.<universe>`).
enum UniverseDomain {
    /// The longest DNS name.
    static let maximumLength = 253

    /// `value` lowercased when it is a domain name; otherwise an error naming `place` (the file
    /// and field, the variable, the server) and what is wrong, quoting at most 100 printable
    /// characters of the value (a universe domain is never a secret).
    static func validated(_ value: String, from place: String) throws(OAuthError) -> String {
        let shown = "\"\(Printable.quoted(String(value.prefix(100))))\""
        guard !value.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw OAuthError(
                .invalidConfiguration,
                "\(place) is empty; a universe domain is a domain name like googleapis.com"
            )
        }
        if value.contains("://") || value.contains("/") {
            throw OAuthError(
                .invalidConfiguration,
                "\(place) is \(shown), a URL or path; a universe domain is the domain name alone, like googleapis.com"
            )
        }
        var name = Substring(value)
        if name.hasSuffix(".") { name = name.dropLast() }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        let isDomainName =
            value.utf8.count <= maximumLength && labels.count >= 2
            && labels.allSatisfy { label in
                (1...63).contains(label.utf8.count)
                    && label.utf8.allSatisfy(isLabelByte)
                    && label.first != "-" && label.last != "-"
            }
        guard isDomainName else {
            throw OAuthError(
                .invalidConfiguration,
                "\(place) is \(shown), not a domain name (dot-separated labels of letters, digits and hyphens, like googleapis.com)"
            )
        }
        return name.lowercased()
    }

    /// A letter, a digit or a hyphen (RFC 1123 labels).
    private static func isLabelByte(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "-") || (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte)
            || (0x61...0x7A).contains(byte)
    }
}
