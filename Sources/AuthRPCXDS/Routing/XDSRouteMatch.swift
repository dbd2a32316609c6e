/// What a call must be for a route to take it (gRFC A28): its path, its headers, and a share of
/// calls.
struct XDSRouteMatch: Sendable, Hashable {
    enum Path: Sendable, Hashable {
        /// Paths that begin with the text (the empty prefix takes every path).
        case prefix(String)
        /// The one path.
        case exact(String)
    }

    let path: Path
    /// `case_sensitive` (true unless set false): whether the path comparison minds case.
    let caseSensitive: Bool
    let headers: [XDSHeaderMatcher]
    /// `runtime_fraction`'s default value, in millionths (nil: every call).
    let fractionPerMillion: UInt32?

    /// Whether every call matches, whatever its path and headers: a path prefix of nothing or of
    /// `/` (which begins every call's `:path`, `/package.Service/Method`, the only shape
    /// `MethodDescriptor` builds; control planes write either for a default route), no header
    /// matcher and no fraction.
    var takesEveryCall: Bool {
        guard headers.isEmpty, fractionPerMillion == nil, case .prefix(let prefix) = path else { return false }
        return prefix.isEmpty || prefix == "/"
    }

    /// Whether a call matches.
    ///
    /// - Parameters:
    ///   - path: the call's `:path` (`/package.Service/Method`).
    ///   - header: the call's value of a header (lowercased name): nil when absent, several values
    ///     joined with `,`. The caller answers `content-type` with `application/grpc` and leaves
    ///     `-bin` headers absent, as gRFC A28 says.
    ///   - randomPerMillion: a uniformly random number in `0..<1_000_000`, for the fraction.
    func matches(path callPath: String, header: (String) -> String?, randomPerMillion: UInt32) -> Bool {
        let subject = caseSensitive ? callPath : callPath.lowercased()
        switch path {
        case .prefix(let prefix):
            guard subject.hasPrefix(caseSensitive ? prefix : prefix.lowercased()) else { return false }
        case .exact(let exact):
            guard subject == (caseSensitive ? exact : exact.lowercased()) else { return false }
        }
        for matcher in headers where !matcher.matches(header(matcher.name)) {
            return false
        }
        if let fractionPerMillion, randomPerMillion >= fractionPerMillion { return false }
        return true
    }
}
