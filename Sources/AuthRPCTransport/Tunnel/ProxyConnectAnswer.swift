/// Reads a proxy's answer to `CONNECT` (RFC 9110 section 9.3.6, RFC 9112's message syntax) as
/// its bytes arrive, with bounds: the status line, then header fields up to the empty line.
///
/// A 2xx answer opens the tunnel: its fields are read and dropped (a 2xx to CONNECT has no
/// content, whatever Content-Length or Transfer-Encoding say), and the bytes after the empty
/// line are the tunnel's first bytes. Any other final status fails as soon as its status line is
/// in, without reading more of what the proxy sends. 1xx answers are skipped. Everything the
/// proxy says goes into messages as ``Printable`` text.
struct ProxyConnectAnswer {
    /// The most bytes an answer's head (every 1xx head and the final one) may take.
    static let maximumHeadBytes = 16 << 10
    /// The most header fields in all.
    static let maximumFields = 100
    /// The longest status line accepted; proxies send a few dozen bytes.
    static let maximumStatusLineBytes = 1024

    /// How the answer stands after the bytes seen so far.
    enum Outcome: Equatable {
        /// The head is not complete yet.
        case needsMore
        /// 2xx: the tunnel is open; the bytes from `tunnelStart` in ``received`` are the
        /// server's, through the tunnel.
        case established(tunnelStart: Int)
        /// A final status other than 2xx; `statusLine` printable.
        case refused(status: Int, statusLine: String)
        /// Not an HTTP answer, or over a bound; the reason is printable.
        case malformed(String)
    }

    /// Everything received so far.
    private(set) var received: [UInt8] = []
    /// Where the line being read starts.
    private var lineStart = 0
    /// Whether the next line is a status line (else a header field).
    private var expectsStatusLine = true
    /// The final answer's status, once its status line is in.
    private var status: Int?
    private var fields = 0

    /// Takes `bytes` in and says where the answer stands. Once the outcome is anything but
    /// ``Outcome/needsMore`` it no longer changes.
    mutating func receive<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Outcome {
        received.append(contentsOf: bytes)
        while let newline = received[lineStart...].firstIndex(of: UInt8(ascii: "\n")) {
            // The same bound as for a status line still coming in below (its CR counted), so the
            // answer does not depend on how the bytes were split.
            if expectsStatusLine && newline - lineStart > Self.maximumStatusLineBytes {
                return .malformed("the proxy's answer is not HTTP: \(shown(received[lineStart...].prefix(120)))")
            }
            var end = newline
            if end > lineStart && received[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            let line = received[lineStart..<end]
            lineStart = newline + 1
            if let outcome = take(line) { return outcome }
        }
        let pending = received.count - lineStart
        if expectsStatusLine && pending > Self.maximumStatusLineBytes {
            return .malformed("the proxy's answer is not HTTP: \(shown(received[lineStart...].prefix(120)))")
        }
        if lineStart + pending > Self.maximumHeadBytes {
            return .malformed(
                "the proxy's answer has more than \(Self.maximumHeadBytes) bytes of header without ending: \(shown(received.prefix(120)))"
            )
        }
        return .needsMore
    }

    /// One complete line; an outcome when the answer is decided by it.
    private mutating func take(_ line: ArraySlice<UInt8>) -> Outcome? {
        if lineStart > Self.maximumHeadBytes {
            return .malformed(
                "the proxy's answer has more than \(Self.maximumHeadBytes) bytes of header without ending: \(shown(received.prefix(120)))"
            )
        }
        if expectsStatusLine {
            guard let code = HTTP1Syntax.statusCode(line) else {
                return .malformed("the proxy's answer is not HTTP: \(shown(line.prefix(120)))")
            }
            expectsStatusLine = false
            status = code
            switch code {
            case 100..<200, 200..<300:
                return nil
            default:
                return .refused(status: code, statusLine: shown(line.prefix(200)))
            }
        }
        if line.isEmpty {
            guard let status else { return .malformed("the proxy's answer has no status line") }
            if (100..<200).contains(status) {
                // An interim answer: the final one follows.
                expectsStatusLine = true
                self.status = nil
                return nil
            }
            return .established(tunnelStart: lineStart)
        }
        fields += 1
        guard fields <= Self.maximumFields else {
            return .malformed("the proxy's answer has more than \(Self.maximumFields) header fields")
        }
        guard HTTP1Syntax.field(line) != nil else {
            return .malformed("the proxy's answer has a malformed header line: \(shown(line.prefix(120)))")
        }
        return nil
    }

    private func shown<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        "'" + Printable.bytes(bytes, limit: 200) + "'"
    }
}
