import HTTP2Client

extension HTTP2Target {
    /// Parses `host:port`, `[ipv6]:port`, or a bare host (port 443).
    init(parsing text: String) throws(RPCError) {
        func invalid(_ reason: String) -> RPCError {
            // Control characters shown as '?', so the message stays one printable line.
            let shown = String(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) })
            return RPCError(code: .invalidArgument, message: "invalid target '\(shown)': \(reason)")
        }
        var host: Substring
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw invalid("missing ']' after the IPv6 address") }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.first == ":" else { throw invalid("expected ':' and a port after ']'") }
                portText = rest.dropFirst()
            }
        } else if let colon = text.lastIndex(of: ":") {
            guard text.firstIndex(of: ":") == colon else {
                throw invalid("put IPv6 addresses in brackets, as [::1]:443")
            }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        } else {
            host = Substring(text)
        }
        guard !host.isEmpty else { throw invalid("the host is empty") }
        guard host.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "/" }) else {
            throw invalid("expected host:port")
        }
        if let problem = Authority.hostProblem(in: String(host)) { throw invalid(problem) }
        var port = 443
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else {
                throw invalid("the port must be a number from 1 to 65535")
            }
            port = value
        }
        self.init(host: String(host), port: port)
    }
}
