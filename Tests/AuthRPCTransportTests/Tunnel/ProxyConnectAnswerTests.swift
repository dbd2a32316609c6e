import Testing

@testable import AuthRPCTransport

@Suite("The CONNECT exchange: the request written, the proxy's answer read with bounds")
struct ProxyConnectAnswerTests {
    private func outcome(_ text: String, byteByByte: Bool = false) -> (ProxyConnectAnswer.Outcome, [UInt8]) {
        var answer = ProxyConnectAnswer()
        var result = ProxyConnectAnswer.Outcome.needsMore
        if byteByByte {
            for byte in text.utf8 {
                result = answer.receive(CollectionOfOne(byte))
                if result != .needsMore { break }
            }
        } else {
            result = answer.receive(Array(text.utf8))
        }
        if case .established(let start) = result { return (result, Array(answer.received[start...])) }
        return (result, [])
    }

    @Test("2xx opens the tunnel; the bytes after the empty line are the server's, whole or a byte at a time")
    func established() {
        for byteByByte in [false, true] {
            let (result, tunnel) = outcome(
                "HTTP/1.1 200 Connection established\r\nProxy-agent: tinyproxy/1.11.1\r\n\r\nSERVER",
                byteByByte: byteByByte
            )
            guard case .established = result else {
                Issue.record("got \(result)")
                continue
            }
            #expect(byteByByte ? tunnel.isEmpty : tunnel == Array("SERVER".utf8))
        }
        // LF-only lines, no reason phrase, HTTP/1.0, a 2xx with a body announced (ignored).
        for text in ["HTTP/1.0 200\n\n", "HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n"] {
            if case .established = outcome(text).0 {} else { Issue.record("\(text): \(outcome(text).0)") }
        }
    }

    @Test("1xx answers are skipped; the final answer decides")
    func informational() {
        let (result, tunnel) = outcome("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\nX")
        #expect(tunnel == Array("X".utf8), "\(result)")
    }

    @Test("any other status fails as soon as its status line is in, shown printable")
    func refused() {
        #expect(
            outcome("HTTP/1.1 407 Proxy Authentication Required\r\n").0
                == .refused(status: 407, statusLine: "'HTTP/1.1 407 Proxy Authentication Required'")
        )
        #expect(outcome("HTTP/1.0 403 \u{1b}[2J\r\n").0 == .refused(status: 403, statusLine: "'HTTP/1.0 403 \\x1b[2J'"))
        #expect(outcome("HTTP/1.1 302 Found\r\nLocation: http://x/\r\n\r\n").0.isRefused)
    }

    @Test("what is not an HTTP answer, or passes a bound, is malformed")
    func malformed() {
        let cases = [
            "SSH-2.0-OpenSSH\r\n", "HTTP/2 200 OK\r\n\r\n", "HTTP/1.1 2000 OK\r\n", "HTTP/1.1 20 OK\r\n",
            "HTTP/1.1 200OK\r\n", "HTTP/1.1 200 OK\r\n folded\r\n\r\n", "HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
            "HTTP/1.1 200 OK\r\n: empty name\r\n\r\n", "HTTP/1.1 200 OK\r\nbad name: x\r\n\r\n",
        ]
        for text in cases {
            guard case .malformed(let reason) = outcome(text).0 else {
                Issue.record("\(text.debugDescription): \(outcome(text).0)")
                continue
            }
            #expect(!reason.isEmpty)
        }
        let longStatus = String(repeating: "x", count: ProxyConnectAnswer.maximumStatusLineBytes + 1)
        #expect(outcome(longStatus).0.isMalformed)
        let longHead =
            "HTTP/1.1 200 OK\r\nX: " + String(repeating: "a", count: ProxyConnectAnswer.maximumHeadBytes) + "\r\n\r\n"
        #expect(outcome(longHead).0.isMalformed)
        let manyFields =
            "HTTP/1.1 200 OK\r\n" + String(repeating: "X: y\r\n", count: ProxyConnectAnswer.maximumFields + 1) + "\r\n"
        #expect(outcome(manyFields).0.isMalformed)
        let endless = "HTTP/1.1 200 OK\r\nX: " + String(repeating: "a", count: ProxyConnectAnswer.maximumHeadBytes)
        #expect(outcome(endless).0.isMalformed)
    }

    /// Found by `make fuzz` (proxy-connect-answer): a status line longer than the bound was
    /// refused when it came in pieces but taken when its end came with it.
    @Test("a status line over the bound is malformed whole and a byte at a time; one at the bound (CR counted) is not")
    func statusLineBound() {
        let limit = ProxyConnectAnswer.maximumStatusLineBytes
        let prefix = "HTTP/1.1 200 "
        let over = prefix + String(repeating: "x", count: limit - prefix.count) + "\r\n\r\n"
        let atBound = prefix + String(repeating: "x", count: limit - prefix.count - 1) + "\r\n\r\n"
        for byteByByte in [false, true] {
            #expect(outcome(over, byteByByte: byteByByte).0.isMalformed, "byte by byte: \(byteByByte)")
            #expect(outcome(atBound, byteByByte: byteByByte).0 == .established(tunnelStart: atBound.utf8.count))
        }
        // After an interim answer, the final status line has the same bound.
        let interim = "HTTP/1.1 100 Continue\r\n\r\n" + over
        for byteByByte in [false, true] {
            #expect(outcome(interim, byteByByte: byteByByte).0.isMalformed, "byte by byte: \(byteByByte)")
        }
    }

    @Test("the request: CONNECT and Host name the target (IPv6 in brackets), credentials only when given")
    func request() {
        let plain = ProxyTunnel.request(for: HostAndPort(host: "api.example.com", port: 443), authorization: nil)
        #expect(plain == Array("CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n".utf8))
        let v6 = ProxyTunnel.request(for: HostAndPort(host: "2001:db8::1", port: 8443), authorization: "Basic dTpw")
        #expect(
            v6
                == Array(
                    "CONNECT [2001:db8::1]:8443 HTTP/1.1\r\nHost: [2001:db8::1]:8443\r\nProxy-Authorization: Basic dTpw\r\n\r\n"
                        .utf8
                )
        )
        // Nothing that could end a line or a field gets into the request.
        #expect(ProxyTunnel.request(for: HostAndPort(host: "a\r\nX: y", port: 1), authorization: nil) == nil)
        #expect(ProxyTunnel.request(for: HostAndPort(host: "a b", port: 1), authorization: nil) == nil)
        #expect(ProxyTunnel.request(for: HostAndPort(host: "a", port: 1), authorization: "Basic x\r\nY: z") == nil)
    }
}

extension ProxyConnectAnswer.Outcome {
    var isMalformed: Bool {
        if case .malformed = self { return true }
        return false
    }

    var isRefused: Bool {
        if case .refused = self { return true }
        return false
    }
}
