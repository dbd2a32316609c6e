import Testing

@testable import OAuth2

/// `LoopbackRequestHead.parse` on bytes, without sockets: what a browser sends is taken; every
/// other head is refused with the problem (and status) the parser decides.
@Suite("Loopback request heads")
struct LoopbackRequestHeadTests {
    typealias Head = LoopbackRequestHead

    func parse(_ text: String, limits: Head.Limits = .init()) -> Head.Parse {
        Head.parse(Array(text.utf8), limits: limits)
    }

    func expectInvalid(
        _ problem: Head.Problem,
        _ inputs: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for input in inputs {
            #expect(parse(input) == .invalid(problem), "\(input.debugDescription)", sourceLocation: sourceLocation)
        }
    }

    static let browserRedirect =
        "GET /oauth2callback?state=Xyz_123&code=4%2F0AbCdEf&scope=email%20openid HTTP/1.1\r\n"
        + "Host: 127.0.0.1:53682\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64)\r\n"
        + "Accept: text/html,application/xhtml+xml\r\nAccept-Language: en-GB,en;q=0.9\r\n"
        + "Cookie: theme=dark; dev=caf\u{E9}\r\nSec-Fetch-Mode: navigate\r\n\r\n"

    @Test("a browser's redirect: method, target, version, Host; path and query as sent")
    func browserRedirect() throws {
        let head = Head(
            method: "GET",
            target: "/oauth2callback?state=Xyz_123&code=4%2F0AbCdEf&scope=email%20openid",
            version: .http1_1,
            host: "127.0.0.1:53682"
        )
        #expect(parse(Self.browserRedirect) == .complete(head))
        #expect(head.path == "/oauth2callback")
        #expect(head.query == "state=Xyz_123&code=4%2F0AbCdEf&scope=email%20openid")
        // A body (or a pipelined request) after the blank line changes nothing.
        #expect(parse(Self.browserRedirect + "GARBAGE\0\r\n\r\n") == .complete(head))
    }

    @Test("HTTP/1.0 may leave Host out; HTTP/1.1 must send exactly one; two are refused in either")
    func hostField() {
        #expect(
            parse("GET /cb HTTP/1.0\r\n\r\n") == .complete(Head(method: "GET", target: "/cb", version: .http1_0))
        )
        #expect(
            parse("GET /cb HTTP/1.0\r\nHost: a\r\n\r\n")
                == .complete(Head(method: "GET", target: "/cb", version: .http1_0, host: "a"))
        )
        // The name is case-insensitive and the value trimmed of spaces and tabs.
        #expect(
            parse("GET /cb HTTP/1.1\r\nhOsT:\t 127.0.0.1:8 \t\r\n\r\n")
                == .complete(Head(method: "GET", target: "/cb", version: .http1_1, host: "127.0.0.1:8"))
        )
        #expect(
            parse("GET /cb HTTP/1.1\r\nHost:\r\n\r\n")
                == .complete(Head(method: "GET", target: "/cb", version: .http1_1, host: ""))
        )
        expectInvalid(
            .badHost,
            [
                "GET /cb HTTP/1.1\r\n\r\n", "GET /cb HTTP/1.1\r\nX-Host: a\r\n\r\n",
                "GET /cb HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", "GET /cb HTTP/1.0\r\nHost: a\r\nhost: b\r\n\r\n",
            ]
        )
        // A second Host is refused as soon as its line arrives.
        #expect(parse("GET /cb HTTP/1.1\r\nHost: a\r\nHost: b\r\n") == .invalid(.badHost))
    }

    @Test("every proper prefix of a well-formed head is incomplete")
    func prefixesAreIncomplete() {
        let bytes = Array(Self.browserRedirect.utf8)
        for count in 0..<bytes.count {
            #expect(Head.parse(bytes.prefix(count)) == .incomplete, "prefix of \(count) bytes")
        }
    }

    @Test("what a prefix amounts to, when not incomplete, stays the same as bytes arrive")
    func refusalsAreStable() {
        let limits = Head.Limits(maximumBytes: 1024, maximumFieldCount: 50)
        let inputs = [
            Self.browserRedirect, "G(T /cb HTTP/1.1\r\nHost: a\r\n\r\n", "GET /cb HTTP/1.1\r\nHost: a\nX: b\r\n\r\n",
            "GET /cb HTTP/1.1\r\nHost: a\r\nHost: b\r\nX: \0\r\n\r\n", String(repeating: "a", count: 2000),
            "GET /cb HTTP/1.1\r\n" + String(repeating: "X: y\r\n", count: 60) + "\r\n",
        ]
        for input in inputs {
            let bytes = Array(input.utf8)
            let whole = Head.parse(bytes, limits: limits)
            #expect(whole != .incomplete)
            for count in 0...bytes.count {
                let prefix = Head.parse(bytes.prefix(count), limits: limits)
                #expect(prefix == .incomplete || prefix == whole, "\(input.prefix(30).debugDescription) at \(count)")
            }
        }
    }

    @Test("lines end in CRLF: a bare LF or CR, or a leading empty line, is refused")
    func lineEndings() {
        expectInvalid(
            .malformedLine,
            [
                "GET /cb HTTP/1.1\n\r\n", "GET /cb HTTP/1.1\r\nHost: a\n\r\n", "GET /cb HTTP/1.1\r\nHost: a\r\n\n",
                "\n", "GET /c\rb HTTP/1.1\r\nHost: a\r\n\r\n",
            ]
        )
        expectInvalid(.malformedRequestLine, ["\r\n", "\r\nGET /cb HTTP/1.1\r\nHost: a\r\n\r\n"])
        // A bare CR in a field value is a control byte in the field.
        expectInvalid(.malformedField, ["GET /cb HTTP/1.1\r\nHost: a\rb\r\n\r\n"])
    }

    @Test("NUL and other control bytes are refused in the request line and in fields")
    func controlBytes() {
        expectInvalid(
            .malformedLine,
            [
                "GET /cb\0 HTTP/1.1\r\nHost: a\r\n\r\n", "\0GET /cb HTTP/1.1\r\nHost: a\r\n\r\n",
                "GET\t/cb HTTP/1.1\r\nHost: a\r\n\r\n", "GET /\u{7F} HTTP/1.1\r\nHost: a\r\n\r\n",
                "GET /cb HTTP/1.1\u{1B}\r\nHost: a\r\n\r\n",
            ]
        )
        expectInvalid(
            .malformedField,
            [
                "GET /cb HTTP/1.1\r\nHost: a\0\r\n\r\n", "GET /cb HTTP/1.1\r\nHost: a\r\nX: \0\r\n\r\n",
                "GET /cb HTTP/1.1\r\nHost: a\r\nX\0: y\r\n\r\n", "GET /cb HTTP/1.1\r\nHost: a\r\nX: \u{7F}\r\n\r\n",
            ]
        )
    }

    @Test("the request line is METHOD SP TARGET SP VERSION, single spaces, the method a token")
    func requestLine() {
        expectInvalid(
            .malformedRequestLine,
            [
                "GET  /cb HTTP/1.1\r\n", "GET /cb  HTTP/1.1\r\n", "GET /cb HTTP/1.1 \r\n", " GET /cb HTTP/1.1\r\n",
                "GET /cb\r\n", "GET\r\n", "/cb HTTP/1.1\r\n", "G(T /cb HTTP/1.1\r\n", "GÉT /cb HTTP/1.1\r\n",
                "GET  HTTP/1.1\r\n",
            ]
        )
        // Any token is a method; the receiver answers 405 to all but GET (methods are case-sensitive).
        for method in ["get", "POST", "HEAD", "M-SEARCH", "X!#$%&'*+-.^_`|~9"] {
            #expect(
                parse("\(method) /cb HTTP/1.1\r\nHost: a\r\n\r\n")
                    == .complete(Head(method: method, target: "/cb", version: .http1_1, host: "a"))
            )
        }
    }

    @Test("versions: 1.0 and 1.1 taken, other HTTP/d.d unsupported (505), anything else malformed")
    func versions() {
        expectInvalid(.unsupportedVersion, ["GET /cb HTTP/2.0\r\n", "GET /cb HTTP/1.2\r\n", "GET /cb HTTP/0.9\r\n"])
        expectInvalid(
            .malformedRequestLine,
            [
                "GET /cb HTTP/2\r\n", "GET /cb http/1.1\r\n", "GET /cb HTTP/1.10\r\n", "GET /cb HTTP/11\r\n",
                "GET /cb HTTPS/1.1\r\n", "GET /cb HTTP/1.x\r\n",
            ]
        )
        #expect(Head.Problem.unsupportedVersion.status == 505)
    }

    @Test("targets: origin form only; absolute, authority and asterisk forms are refused")
    func targetForms() {
        expectInvalid(
            .targetNotInOriginForm,
            [
                "GET http://127.0.0.1:53682/cb?state=s&code=c HTTP/1.1\r\n", "GET https://a.example/cb HTTP/1.1\r\n",
                "CONNECT 127.0.0.1:53682 HTTP/1.1\r\n", "OPTIONS * HTTP/1.1\r\n", "GET cb HTTP/1.1\r\n",
                "GET ?code=x HTTP/1.1\r\n",
            ]
        )
    }

    @Test("targets: visible ASCII without '#', every '%' a %HH escape; browsers' raw |^{} are taken")
    func targetCharacters() {
        for target in ["/", "/cb?a=%41%e2%9c%93", "/cb?q=a|b^c{d}e[f]`g\\h\"i<j>k'l", "/a?b=c?d/e", "//x/../y"] {
            #expect(
                parse("GET \(target) HTTP/1.1\r\nHost: a\r\n\r\n")
                    == .complete(Head(method: "GET", target: target, version: .http1_1, host: "a")),
                "\(target)"
            )
        }
        expectInvalid(
            .malformedTarget,
            [
                "GET /cb#frag HTTP/1.1\r\n", "GET /cb?state=caf\u{E9} HTTP/1.1\r\n", "GET /cb?a=% HTTP/1.1\r\n",
                "GET /cb?a=%4 HTTP/1.1\r\n", "GET /cb?a=%G1 HTTP/1.1\r\n", "GET /cb?a=%4g HTTP/1.1\r\n",
                "GET /%%41 HTTP/1.1\r\n",
            ]
        )
        // Raw bytes above 0x7F (not UTF-8 either).
        #expect(
            Head.parse(Array("GET /cb?a=".utf8) + [0xFF] + Array(" HTTP/1.1\r\n".utf8)) == .invalid(.malformedTarget)
        )
    }

    @Test("header fields: a token name right before ':', no folding; values may hold bytes above 0x7F")
    func fields() {
        expectInvalid(
            .malformedField,
            [
                "GET /cb HTTP/1.1\r\nHost : a\r\n\r\n", "GET /cb HTTP/1.1\r\nHost\t: a\r\n\r\n",
                "GET /cb HTTP/1.1\r\nHost a\r\n\r\n", "GET /cb HTTP/1.1\r\n: a\r\n\r\n",
                "GET /cb HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", "GET /cb HTTP/1.1\r\nHost: a\r\n\tfolded\r\n\r\n",
                "GET /cb HTTP/1.1\r\nX(y): z\r\n\r\n", "GET /cb HTTP/1.1\r\nCaf\u{E9}: z\r\n\r\n",
            ]
        )
        let latin1 = Array("GET /cb HTTP/1.1\r\nHost: a\r\nX-Name: caf".utf8) + [0xE9] + Array("\r\n\r\n".utf8)
        #expect(Head.parse(latin1) == .complete(Head(method: "GET", target: "/cb", version: .http1_1, host: "a")))
        #expect(
            parse("GET /cb HTTP/1.1\r\nHost: a\r\nX-Empty:\r\nX-Colons: a:b::c\r\n\r\n")
                == .complete(Head(method: "GET", target: "/cb", version: .http1_1, host: "a"))
        )
    }

    @Test("the head must end within maximumBytes (else 431); exactly at the limit is taken")
    func sizeLimit() {
        let limits = Head.Limits(maximumBytes: 200)
        let start = "GET /cb HTTP/1.1\r\nHost: a\r\nX: "
        let filler = String(repeating: "v", count: 200 - start.utf8.count - 4)
        let exact = start + filler + "\r\n\r\n"
        #expect(exact.utf8.count == 200)
        #expect(
            parse(exact, limits: limits) == .complete(Head(method: "GET", target: "/cb", version: .http1_1, host: "a"))
        )
        let over = start + filler + "v\r\n\r\n"
        #expect(parse(over, limits: limits) == .invalid(.tooLarge))
        // Up to the limit without its end: still waiting; one byte more: refused.
        #expect(Head.parse(Array(over.utf8).prefix(200), limits: limits) == .incomplete)
        #expect(Head.parse(Array(over.utf8).prefix(201), limits: limits) == .invalid(.tooLarge))
        // A request line alone over the limit.
        #expect(parse("GET /" + String(repeating: "a", count: 300), limits: limits) == .invalid(.tooLarge))
        #expect(Head.Problem.tooLarge.status == 431)
        // The default is 16 KiB.
        #expect(Head.Limits().maximumBytes == 16 * 1024)
        #expect(Head.Limits(maximumBytes: 0).maximumBytes == 64)
    }

    @Test("at most maximumFieldCount header fields (else 431), counted as they arrive")
    func fieldCountLimit() {
        let limits = Head.Limits(maximumFieldCount: 5)
        let four = "GET /cb HTTP/1.1\r\nHost: a\r\n" + String(repeating: "X: y\r\n", count: 4)
        #expect(
            parse(four + "\r\n", limits: limits)
                == .complete(Head(method: "GET", target: "/cb", version: .http1_1, host: "a"))
        )
        #expect(parse(four + "X: y\r\n", limits: limits) == .invalid(.tooManyFields))
        #expect(Head.Problem.tooManyFields.status == 431)
        #expect(Head.Limits().maximumFieldCount == 100)
        #expect(Head.Limits(maximumFieldCount: -3).maximumFieldCount == 1)
    }

    @Test("a malformed head is refused once its bad line arrives, without waiting for the rest")
    func earlyRefusal() {
        #expect(parse("G(T /cb HTTP/1.1\r\n") == .invalid(.malformedRequestLine))
        #expect(parse("GET http://x/ HTTP/1.1\r\n") == .invalid(.targetNotInOriginForm))
        #expect(parse("GET /cb HTTP/1.1\r\nHost : a\r\n") == .invalid(.malformedField))
        // Until a line ends it is not judged.
        #expect(parse("G(T /cb HTTP/1.1") == .incomplete)
    }

    @Test("problems: 400 unless too large (431) or an unsupported version (505); texts quote no input")
    func problems() {
        let all: [Head.Problem] = [
            .tooLarge, .tooManyFields, .malformedLine, .malformedRequestLine, .unsupportedVersion,
            .targetNotInOriginForm, .malformedTarget, .malformedField, .badHost,
        ]
        #expect(all.map(\.status) == [431, 431, 400, 400, 505, 400, 400, 400, 400])
        #expect(Set(all.map(\.description)).count == all.count)
    }

    @Test("query parameters: form-decoded; a repeated name or bytes that are not UTF-8 refuse them all")
    func queryParameters() {
        func parameters(_ target: String) -> [String: String]? {
            Head(method: "GET", target: target, version: .http1_1, host: nil).queryParameters
        }
        #expect(
            parameters("/cb?state=a%20b&code=x+y&flag&check=%E2%9C%93&eq=a=b")
                == ["state": "a b", "code": "x y", "flag": "", "check": "\u{2713}", "eq": "a=b"]
        )
        #expect(parameters("/cb") == [:])
        #expect(parameters("/cb?") == [:])
        #expect(parameters("/cb?&&a=1&") == ["a": "1"])
        #expect(parameters("/cb?=v") == ["": "v"])
        #expect(parameters("/cb?a=%2B%25") == ["a": "+%"])
        // Names are compared after decoding and case-sensitively.
        #expect(parameters("/cb?State=a&state=b") == ["State": "a", "state": "b"])
        for repeated in ["/cb?state=a&state=b", "/cb?state=a&code=c&state=a", "/cb?code=1&c%6Fde=2", "/cb?a&a"] {
            #expect(parameters(repeated) == nil, "\(repeated)")
        }
        for notUTF8 in ["/cb?state=%FF", "/cb?%C3=x", "/cb?a=%E2%9C"] {
            #expect(parameters(notUTF8) == nil, "\(notUTF8)")
        }
    }

    @Test("path and query split at the first '?'")
    func pathAndQuery() {
        let head = Head(method: "GET", target: "/a?b=c?d", version: .http1_1, host: nil)
        #expect(head.path == "/a")
        #expect(head.query == "b=c?d")
        #expect(Head(method: "GET", target: "/a", version: .http1_1, host: nil).query == nil)
    }
}
