import Testing

@testable import AuthRPCTransport

@Suite("HTTP/1.1 responses read with bounds, whole or a byte at a time")
struct HTTP1ResponseParserTests {
    private static let limits = HTTP1ResponseParser.Limits(maximumBodyBytes: 1000)

    /// Feeds `text` (whole, or a byte at a time), then ends the connection when `close`.
    private func parse(
        _ text: String,
        byteByByte: Bool = false,
        close: Bool = true,
        head: Bool = false,
        limits: HTTP1ResponseParser.Limits = limits
    ) -> Result<HTTP1ResponseParser, TransportFailure> {
        var parser = HTTP1ResponseParser(limits: limits, isHeadRequest: head)
        do throws(TransportFailure) {
            var complete = false
            if byteByByte {
                for byte in text.utf8 where !complete {
                    complete = try parser.receive(CollectionOfOne(byte)) == .complete
                }
            } else {
                complete = try parser.receive(Array(text.utf8)) == .complete
            }
            if !complete {
                guard close else { return .failure(.connectionClosed(reason: "still reading", streamWasSent: true)) }
                try parser.finish()
            }
            return .success(parser)
        } catch {
            return .failure(error)
        }
    }

    private func body(_ text: String, byteByByte: Bool = false, head: Bool = false) -> String? {
        guard case .success(let parser) = parse(text, byteByByte: byteByByte, head: head) else { return nil }
        return String(decoding: parser.body, as: UTF8.self)
    }

    private func failure(_ text: String, limits: HTTP1ResponseParser.Limits = limits) -> TransportFailure? {
        if case .failure(let error) = parse(text, limits: limits) { return error }
        return nil
    }

    @Test("Content-Length, chunked (extensions, trailers) and to-the-close bodies; the same a byte at a time")
    func framing() {
        for byteByByte in [false, true] {
            #expect(body("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloIGNORED", byteByByte: byteByByte) == "hello")
            #expect(
                body(
                    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n1\r\n!\r\n0\r\nX-T: t\r\n\r\n",
                    byteByByte: byteByByte
                ) == "hello!"
            )
            #expect(
                body("HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n")
                    == "0123456789"
            )
            #expect(body("HTTP/1.0 200 OK\r\n\r\nuntil the close", byteByByte: byteByByte) == "until the close")
            #expect(body("HTTP/1.1 200 OK\nContent-Length: 2\n\nok", byteByByte: byteByByte) == "ok")
        }
    }

    @Test("no body after HEAD, 204 and 304, whatever the header says; 1xx answers are skipped")
    func noBody() {
        #expect(body("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n", head: true) == "")
        #expect(body("HTTP/1.1 204 No Content\r\nContent-Length: 50\r\n\r\n") == "")
        #expect(body("HTTP/1.1 304 Not Modified\r\n\r\n") == "")
        guard
            case .success(let parser) = parse(
                "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nA: b\r\nContent-Length: 1\r\n\r\nx"
            )
        else {
            Issue.record("the 1xx answer was not skipped")
            return
        }
        #expect(parser.status == 201)
        #expect(parser.headers.map(\.name) == ["A", "Content-Length"])
        #expect(parser.headers.first?.value == "b")
    }

    @Test("ambiguous or unsupported framing is refused, not guessed at")
    func ambiguousFraming() {
        let cases = [
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
            "HTTP/1.1 200 OK\r\nContent-Length: 3, 4\r\n\r\nabcd",
            "HTTP/1.1 200 OK\r\nContent-Length: -3\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 0x10\r\n\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n",
            "HTTP/1.1 101 Switching Protocols\r\n\r\n",
            "SSH-2.0-OpenSSH\r\n\r\n",
            "HTTP/1.1 200 OK\r\n folded: x\r\n\r\n",
            "HTTP/1.1 200 OK\r\nbad name: x\r\n\r\n",
        ]
        for text in cases {
            guard case .protocolError(let reason)? = failure(text) else {
                Issue.record("\(text.debugDescription): \(String(describing: failure(text)))")
                continue
            }
            #expect(!reason.contains("\r"), "\(reason)")
        }
        // Identical repeated lengths are one length.
        #expect(body("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab") == "ab")
    }

    @Test("bodies over the limit fail: announced, chunked, or running to the close")
    func bodyLimit() {
        for text in [
            "HTTP/1.1 200 OK\r\nContent-Length: 1001\r\n\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3E9\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1F4\r\n" + String(repeating: "a", count: 500)
                + "\r\n1F5\r\n",
            "HTTP/1.1 200 OK\r\n\r\n" + String(repeating: "a", count: 1001),
        ] {
            #expect(failure(text) == .responseBodyTooLarge(limit: 1000), "\(text.prefix(60).debugDescription)")
        }
        #expect(
            body("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + String(repeating: "a", count: 1000))?.count == 1000
        )
    }

    @Test(
        "a chunk size with a sign, white space before it or inside it, or a prefix is refused, not read as a number",
        arguments: ["-1", "+5", " 5", "5 5", "0x5", "-0", "1111111111111111", ""]
    )
    func strictChunkSize(size: String) {
        let chunked =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\(size)\r\n" + String(repeating: "A", count: 100)
        guard case .protocolError(let reason)? = failure(chunked) else {
            Issue.record("chunk size \(size.debugDescription): \(String(describing: failure(chunked)))")
            return
        }
        #expect(reason.contains("malformed chunk size"), "\(reason)")
    }

    @Test(
        "a Content-Length with a sign, a prefix, inner white space or too many digits is refused",
        arguments: ["-1", "+5", "5 5", "0x5", "-0", "1111111111111111", "٥"]
    )
    func strictContentLength(length: String) {
        let text = "HTTP/1.1 200 OK\r\nContent-Length: \(length)\r\n\r\nhello"
        guard case .protocolError(let reason)? = failure(text) else {
            Issue.record("Content-Length \(length.debugDescription): \(String(describing: failure(text)))")
            return
        }
        #expect(reason.contains("malformed Content-Length"), "\(reason)")
    }

    @Test(
        "after any chunk-size line, what the parser holds unread never grows past one line as bytes keep coming",
        arguments: ["-1", "5", "5 ;ext=1", "0"]
    )
    func unreadBytesBounded(size: String) {
        // A chunk size of -1 once left the parser waiting for -1 bytes, holding all that followed.
        var parser = HTTP1ResponseParser(limits: Self.limits)
        do throws(TransportFailure) {
            _ = try parser.receive(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\(size)\r\n".utf8))
            for _ in 0..<10_000 {
                _ = try parser.receive(CollectionOfOne(UInt8(ascii: "A")))
                guard parser.unreadBytes <= Self.limits.maximumLineBytes else {
                    Issue.record("\(parser.unreadBytes) bytes held unread after chunk size \(size.debugDescription)")
                    return
                }
            }
        } catch {
            // Refused (an endless line, a malformed size): the exchange drops the parser.
        }
    }

    @Test("a line exactly at the limit is taken whole and a byte at a time alike; one byte more is refused both ways")
    func lineAtTheLimit() {
        // Found by the http1-response fuzz target: a byte at a time, the line and its CR were
        // held before the LF came, and that one byte over the limit refused the line.
        var limits = Self.limits
        limits.maximumLineBytes = 40
        let atLimit = "HTTP/1.1 200 " + String(repeating: "k", count: 27)
        for byteByByte in [false, true] {
            let answer = parse(atLimit + "\r\nContent-Length: 2\r\n\r\nok", byteByByte: byteByByte, limits: limits)
            guard case .success(let parser) = answer else {
                Issue.record("a 40-byte status line (byte by byte: \(byteByByte)): \(answer)")
                continue
            }
            #expect(parser.status == 200 && parser.body == Array("ok".utf8))
            let over = parse(atLimit + "k\r\nContent-Length: 2\r\n\r\nok", byteByByte: byteByByte, limits: limits)
            guard case .failure(.protocolError(let reason)) = over else {
                Issue.record("a 41-byte status line (byte by byte: \(byteByByte)): \(over)")
                continue
            }
            #expect(reason.contains("longer than 40 bytes"))
        }
    }

    @Test("header bounds: the bytes of the fields, their number, one endless line, and endless 1xx answers")
    func headerBounds() {
        var limits = Self.limits
        limits.maximumHeaderBytes = 100
        #expect(
            failure("HTTP/1.1 200 OK\r\nA: " + String(repeating: "a", count: 120) + "\r\n\r\n", limits: limits)
                == .responseHeaderListTooLarge(limit: 100)
        )
        let many = "HTTP/1.1 200 OK\r\n" + String(repeating: "A: b\r\n", count: 101) + "\r\n"
        #expect(failure(many).map { "\($0)" }?.contains("more than 100 header fields") == true)
        let endless = "HTTP/1.1 200 OK\r\nA: " + String(repeating: "a", count: 70_000)
        #expect(failure(endless) == .responseHeaderListTooLarge(limit: 64 << 10))
        let longStatus = "HTTP/1.1 200 " + String(repeating: "x", count: 9000)
        #expect(failure(longStatus).map { "\($0)" }?.contains("longer than") == true)
        let informational = String(repeating: "HTTP/1.1 103 Early Hints\r\n\r\n", count: 9) + "HTTP/1.1 200 OK\r\n\r\n"
        #expect(failure(informational).map { "\($0)" }?.contains("informational") == true)
        // Trailers count too.
        let trailers =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n" + String(repeating: "T: t\r\n", count: 100)
            + "\r\n"
        #expect(failure(trailers).map { "\($0)" }?.contains("more than 100 header fields") == true)
    }

    @Test("an answer cut short says where")
    func cutShort() {
        #expect(failure("").map { "\($0)" }?.contains("without answering") == true)
        #expect(failure("HTTP/1.1 200 OK\r\nA: b").map { "\($0)" }?.contains("header") == true)
        #expect(failure("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc").map { "\($0)" }?.contains("6 bytes") == true)
        #expect(
            failure("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab").map { "\($0)" }?.contains("chunked")
                == true
        )
    }

    @Test("the request: Host without the default port, IPv6 in brackets, Connection: close, nothing smuggled")
    func request() throws {
        func text(_ request: HTTP1Request, defaultPort: Int = 443) throws -> String {
            String(decoding: try request.serialized(defaultPort: defaultPort).get(), as: UTF8.self)
        }
        let deadline = ContinuousClock.now
        var post = HTTP1Request(
            method: "POST",
            path: "/token",
            target: HostAndPort(host: "oauth2.example.com", port: 443),
            headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Array("a=b".utf8),
            deadline: deadline,
            maximumResponseBodyBytes: 10
        )
        #expect(
            try text(post)
                == "POST /token HTTP/1.1\r\nHost: oauth2.example.com\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                + "Content-Length: 3\r\nConnection: close\r\n\r\na=b"
        )
        post.target = HostAndPort(host: "::1", port: 8443)
        post.body = nil
        post.headers = []
        #expect(
            try text(post)
                == "POST /token HTTP/1.1\r\nHost: [::1]:8443\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
        var get = post
        get.method = "GET"
        get.path = ""
        #expect(try text(get, defaultPort: 80) == "GET / HTTP/1.1\r\nHost: [::1]:8443\r\nConnection: close\r\n\r\n")
        for headers in [
            [("X-A", "v\r\nInjected: 1")], [("X A", "v")], [("Host", "elsewhere")], [("Content-Length", "9")],
            [("Transfer-Encoding", "chunked")],
        ] {
            var bad = post
            bad.headers = headers
            guard case .failure(.invalidRequest) = bad.serialized(defaultPort: 443) else {
                Issue.record("\(headers) was accepted")
                continue
            }
        }
        var badPath = post
        badPath.path = "/a b"
        #expect(throws: TransportFailure.self) { try badPath.serialized(defaultPort: 443).get() }
    }
}
