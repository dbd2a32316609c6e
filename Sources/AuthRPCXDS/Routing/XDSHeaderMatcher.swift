/// One header condition of a route (gRFC A28; string matchers as gRFC A63).
struct XDSHeaderMatcher: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case exact(String)
        case prefix(String)
        case suffix(String)
        case contains(String)
        /// A value that parses as a base-10 integer in `start..<end`.
        case range(start: Int64, end: Int64)
        /// Whether the header is there at all.
        case present(Bool)
    }

    /// The header's name, lowercased.
    let name: String
    let kind: Kind
    /// Whether string comparisons ignore case (`StringMatcher.ignore_case`).
    let ignoresCase: Bool
    /// `invert_match`: the result is negated, except that an absent header fails every kind but
    /// `present`.
    let inverted: Bool

    /// Whether a call whose header `name` has `value` (nil: absent; several values joined with
    /// `,`) matches.
    func matches(_ value: String?) -> Bool {
        let matched: Bool
        switch kind {
        case .present(let present):
            matched = (value != nil) == present
        case .range(let start, let end):
            guard let value else { return false }
            guard let number = Int64(value) else {
                matched = false
                break
            }
            matched = number >= start && number < end
        case .exact(let pattern), .prefix(let pattern), .suffix(let pattern), .contains(let pattern):
            guard let value else { return false }
            let subject = ignoresCase ? value.lowercased() : value
            let wanted = ignoresCase ? pattern.lowercased() : pattern
            switch kind {
            case .exact: matched = subject == wanted
            case .prefix: matched = subject.hasPrefix(wanted)
            case .suffix: matched = subject.hasSuffix(wanted)
            default: matched = subject.contains(wanted)
            }
        }
        return matched != inverted
    }
}
