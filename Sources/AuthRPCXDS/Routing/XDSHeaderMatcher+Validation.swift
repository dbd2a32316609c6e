internal import SwiftProtobuf

extension XDSHeaderMatcher {
    /// Validates a header matcher (gRFC A28, with `string_match` as gRFC A63).
    init(validating message: Envoy_Config_Route_V3_HeaderMatcher) throws(XDSResourceError) {
        guard !message.name.isEmpty else { throw XDSResourceError("name", "is empty") }
        for (field, text) in [("name", message.name)] where text.utf8.count > XDSLimits.stringBytes {
            throw XDSResourceError(field, "longer than \(XDSLimits.stringBytes) bytes")
        }
        let kind: Kind
        var ignoresCase = false
        switch message.headerMatchSpecifier {
        case .exactMatch(let text): kind = .exact(try Self.bounded(text, "exact_match"))
        case .prefixMatch(let text): kind = .prefix(try Self.bounded(text, "prefix_match"))
        case .suffixMatch(let text): kind = .suffix(try Self.bounded(text, "suffix_match"))
        case .containsMatch(let text): kind = .contains(try Self.bounded(text, "contains_match"))
        case .presentMatch(let present): kind = .present(present)
        case .rangeMatch(let range):
            guard range.start <= range.end else {
                throw XDSResourceError("range_match", "start \(range.start) is after end \(range.end)")
            }
            kind = .range(start: range.start, end: range.end)
        case .safeRegexMatch:
            throw XDSResourceError("safe_regex_match", "regular expressions are not supported by this client")
        case .stringMatch(let matcher):
            ignoresCase = matcher.ignoreCase
            switch matcher.matchPattern {
            case .exact(let text): kind = .exact(try Self.bounded(text, "string_match.exact"))
            case .prefix(let text): kind = .prefix(try Self.bounded(text, "string_match.prefix"))
            case .suffix(let text): kind = .suffix(try Self.bounded(text, "string_match.suffix"))
            case .contains(let text): kind = .contains(try Self.bounded(text, "string_match.contains"))
            case .safeRegex:
                throw XDSResourceError(
                    "string_match.safe_regex",
                    "regular expressions are not supported by this client"
                )
            case nil:
                throw XDSResourceError("string_match", "no match pattern")
            }
        case nil:
            throw XDSResourceError("", "no header match specifier")
        }
        self.init(name: message.name.lowercased(), kind: kind, ignoresCase: ignoresCase, inverted: message.invertMatch)
    }

    private static func bounded(_ text: String, _ field: String) throws(XDSResourceError) -> String {
        guard text.utf8.count <= XDSLimits.stringBytes else {
            throw XDSResourceError(field, "longer than \(XDSLimits.stringBytes) bytes")
        }
        return text
    }
}
