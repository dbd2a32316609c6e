import AuthRPCSyntax
import AuthRPCTransport

/// A proxy URL taken apart: `http://[user[:password]@]host[:port][/]`.
struct ProxyURL: Sendable, Hashable, CustomStringConvertible {
    /// The proxy's host and port (80 unless given).
    var address: HostAndPort
    /// `user:password`, percent-decoded, when the URL has credentials.
    var credentials: [UInt8]?

    /// Parses `text`; `origin` names where it came from for the error (`https_proxy`,
    /// `the proxy URL`).
    ///
    /// - Throws: `invalidArgument` saying what is wrong, never repeating a password.
    init(parsing text: String, from origin: String) throws(RPCError) {
        func invalid(_ reason: String) -> RPCError {
            RPCError(code: .invalidArgument, message: "invalid proxy URL in \(origin): \(reason)")
        }
        var rest = Substring(text.trimmingASCIIWhitespace)
        if let schemeEnd = rest.firstRange(of: "://") {
            let scheme = rest[..<schemeEnd.lowerBound].lowercased()
            guard scheme == "http" else {
                let shown = Printable.text(String(scheme), limit: 20)
                throw invalid(
                    "the scheme '\(shown)' is not supported: only http:// proxies (HTTP CONNECT over plain TCP) are"
                )
            }
            rest = rest[schemeEnd.upperBound...]
        }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains(where: { $0 == "/" || $0 == "?" || $0 == "#" }) else {
            throw invalid("expected http://[user:password@]host[:port], without a path, query or fragment")
        }
        if let at = rest.lastIndex(of: "@") {
            guard
                let decoded = PercentEncoding.decodedBytes(rest[..<at], plusIsSpace: false, rejectingMalformed: true)
            else {
                throw invalid("the credentials before '@' have a malformed %-escape")
            }
            credentials = decoded
            rest = rest[rest.index(after: at)...]
        } else {
            credentials = nil
        }
        guard !rest.isEmpty else { throw invalid("the host is empty") }
        if let problem = Authority.problem(in: String(rest)) { throw invalid(problem) }
        // Authority.problem accepted host[:port] with the IPv6 address in brackets.
        var host = rest
        var port = 80
        if rest.hasPrefix("[") {
            let close = rest.firstIndex(of: "]")!
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty { port = Int(after.dropFirst()) ?? 0 }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            port = Int(rest[rest.index(after: colon)...]) ?? 0
        }
        guard (1...65535).contains(port) else { throw invalid("the port must be a number from 1 to 65535") }
        address = HostAndPort(host: String(host), port: port)
    }

    /// The `Proxy-Authorization` value (RFC 7617 Basic), when there are credentials.
    var authorization: String? {
        credentials.map { "Basic " + Base64Codec.standard.encode($0, padded: true) }
    }

    /// `http://host:port`, without credentials.
    var description: String { "http://\(address)" }
}

extension String {
    /// Without leading and trailing spaces, tabs, CR and LF.
    var trimmingASCIIWhitespace: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        guard let start = firstIndex(where: { !isSpace($0) }) else { return "" }
        let end = lastIndex(where: { !isSpace($0) })!
        return String(self[start...end])
    }
}
