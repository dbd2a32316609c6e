/// A virtual host's domain, as Envoy and gRPC match it against the target's host (gRFC A27's
/// "best match"): an exact name, a suffix wildcard (`*.example.com`, `*-east.example.com`), a
/// prefix wildcard (`payments.*`), or `*`. Matching ignores case; a wildcard matches one character
/// at least.
struct XDSDomainPattern: Sendable, Hashable {
    enum Kind: Int, Sendable, Hashable, Comparable {
        // In the order a host looks for a match: the first kind that matches wins.
        case exact, suffix, prefix, universal

        static func < (lhs: Kind, rhs: Kind) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    let kind: Kind
    /// The pattern lowercased, without its `*`.
    let text: String

    /// Parses a domain; a `*` anywhere but at one end, or more than one, is refused.
    init(parsing domain: String) throws(XDSResourceError) {
        guard !domain.isEmpty else { throw XDSResourceError("", "a domain is empty") }
        let stars = domain.count(where: { $0 == "*" })
        let lowered = domain.lowercased()
        if domain == "*" {
            kind = .universal
            text = ""
        } else if stars == 0 {
            kind = .exact
            text = lowered
        } else if stars == 1, domain.hasPrefix("*") {
            kind = .suffix
            text = String(lowered.dropFirst())
        } else if stars == 1, domain.hasSuffix("*") {
            kind = .prefix
            text = String(lowered.dropLast())
        } else {
            throw XDSResourceError("", "invalid domain pattern '\(domain)': a '*' may only begin or end it")
        }
    }

    /// Whether `host` (already lowercased) matches.
    func matches(lowercasedHost host: String) -> Bool {
        switch kind {
        case .exact: host == text
        case .suffix: host.utf8.count > text.utf8.count && host.hasSuffix(text)
        case .prefix: host.utf8.count > text.utf8.count && host.hasPrefix(text)
        case .universal: true
        }
    }

    /// Whether this match is better than `other`'s: an earlier kind, or the same kind and a
    /// longer pattern.
    func isBetter(than other: XDSDomainPattern) -> Bool {
        if kind != other.kind { return kind < other.kind }
        return text.utf8.count > other.text.utf8.count
    }
}
