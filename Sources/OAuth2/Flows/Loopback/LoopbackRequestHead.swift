import AuthRPCSyntax

/// The head of the HTTP/1.1 request a browser sends to the loopback redirect URI, and the rules
/// that read it from the bytes a connection has delivered so far.
///
/// Any local process can reach the redirect port, so the parser takes as little as a browser
/// needs and refuses the rest (RFC 9112 sections 2 to 5):
/// - lines end in CRLF; a bare CR or LF, a NUL or another control byte in a line is refused;
/// - the request line is `method SP target SP HTTP/1.1` (or `HTTP/1.0`), single spaces, the
///   method an RFC 9110 token. Other `HTTP/d.d` versions are unsupported (505);
/// - the target is in origin form (`/path?query`). The absolute, authority and asterisk forms
///   are refused: a browser sends them only to a proxy, never to the server itself. Its bytes
///   are visible ASCII without `#`, as browsers send them (WHATWG URL leaves `|`, `^`, `{`, `}`
///   unescaped in queries), and every `%` starts a `%HH` escape;
/// - header fields are `name: value`: the name a token with no space before the colon, no
///   obsolete line folding, the value without control bytes (bytes above 0x7F are tolerated, as
///   RFC 9110 allows, since a browser sends other local servers' cookies to this port too);
/// - an HTTP/1.1 request has exactly one `Host` field (RFC 9112 section 3.2), an HTTP/1.0 one at
///   most one;
/// - the head, up to its blank line, fits in ``Limits/maximumBytes`` and holds at most
///   ``Limits/maximumFieldCount`` fields (else 431).
///
/// Lines are judged as soon as their line feed arrives, so a malformed request is answered
/// without waiting for the rest, and what a prefix of the bytes amounts to (other than
/// ``Parse/incomplete``) never changes as more bytes arrive.
struct LoopbackRequestHead: Sendable, Equatable {
    /// The HTTP version of the request.
    enum Version: Sendable, Equatable {
        case http1_0
        case http1_1
    }

    /// The method, as sent (case-sensitive: `GET`, not `get`).
    var method: String
    /// The request target in origin form (`/path?query`), as sent.
    var target: String
    /// The request's HTTP version.
    var version: Version
    /// The `Host` field's value without surrounding whitespace; `nil` only in HTTP/1.0.
    var host: String?

    /// The target's path (before any `?`), not decoded: the redirect URI's path is compared as
    /// the authorization server wrote it.
    var path: Substring {
        target.firstIndex(of: "?").map { target[..<$0] } ?? target[...]
    }

    /// The target's query (after the first `?`), not decoded; `nil` without a `?`.
    var query: Substring? {
        target.firstIndex(of: "?").map { target[target.index(after: $0)...] }
    }

    /// Bounds on a request head.
    struct Limits: Sendable, Equatable {
        /// The largest head, from the request line to its blank line included.
        var maximumBytes: Int
        /// The most header fields.
        var maximumFieldCount: Int

        /// Creates limits; 16 KiB and 100 fields by default (Node's and Python's bounds; a
        /// browser's redirect is a few hundred bytes, but it carries every cookie set for
        /// `127.0.0.1`).
        init(maximumBytes: Int = 16 * 1024, maximumFieldCount: Int = 100) {
            self.maximumBytes = max(64, maximumBytes)
            self.maximumFieldCount = max(1, maximumFieldCount)
        }
    }

    /// Why a request head was refused.
    enum Problem: Error, Equatable, CustomStringConvertible {
        /// No complete head within ``Limits/maximumBytes``.
        case tooLarge
        /// More than ``Limits/maximumFieldCount`` header fields.
        case tooManyFields
        /// A bare CR or LF, a NUL or another control byte where none may be.
        case malformedLine
        /// Not `method SP target SP HTTP-version`.
        case malformedRequestLine
        /// A well-formed HTTP version other than 1.0 or 1.1.
        case unsupportedVersion
        /// A target in absolute, authority or asterisk form.
        case targetNotInOriginForm
        /// A target with a byte outside visible ASCII, a `#`, or a malformed `%` escape.
        case malformedTarget
        /// A header field line that is not `token ":" value` (or is folded).
        case malformedField
        /// An HTTP/1.1 request without `Host`, or a request with two.
        case badHost

        /// The status code to answer with.
        var status: Int {
            switch self {
            case .tooLarge, .tooManyFields: return 431
            case .unsupportedVersion: return 505
            default: return 400
            }
        }

        var description: String {
            switch self {
            case .tooLarge: return "the request head is too large"
            case .tooManyFields: return "the request has too many header fields"
            case .malformedLine: return "a line holds a control character or does not end in CRLF"
            case .malformedRequestLine: return "the request line is not METHOD SP TARGET SP HTTP-VERSION"
            case .unsupportedVersion: return "the HTTP version is not 1.0 or 1.1"
            case .targetNotInOriginForm: return "the request target is not in origin form (/path?query)"
            case .malformedTarget: return "the request target holds a character or an escape not allowed"
            case .malformedField: return "a header field line is malformed"
            case .badHost: return "the request has no Host field or more than one"
            }
        }
    }

    /// What the bytes received so far on a connection amount to.
    enum Parse: Sendable, Equatable {
        /// Well-formed so far; the blank line ending the head has not arrived.
        case incomplete
        /// A complete, well-formed head. Bytes after its blank line (a body) are ignored.
        case complete(LoopbackRequestHead)
        /// A head that will never be acceptable, whatever follows.
        case invalid(Problem)
    }

    /// Reads the head at the start of `bytes`.
    static func parse<Bytes: Collection<UInt8>>(_ bytes: Bytes, limits: Limits = Limits()) -> Parse {
        // Only the first `maximumBytes` count: a head must end within them.
        let window = Array(bytes.prefix(limits.maximumBytes))
        var requestLine: RequestLine?
        var fieldCount = 0
        var hosts: [String] = []
        var start = 0
        while let feed = window[start...].firstIndex(of: lineFeed) {
            guard feed > start, window[feed - 1] == carriageReturn else { return .invalid(.malformedLine) }
            let line = window[start..<(feed - 1)]
            start = feed + 1
            guard let parsedRequestLine = requestLine else {
                switch Self.requestLine(line) {
                case .success(let parsed): requestLine = parsed
                case .failure(let problem): return .invalid(problem)
                }
                continue
            }
            if line.isEmpty {
                let expected = parsedRequestLine.version == .http1_1 ? 1...1 : 0...1
                guard expected.contains(hosts.count) else { return .invalid(.badHost) }
                return .complete(
                    LoopbackRequestHead(
                        method: parsedRequestLine.method,
                        target: parsedRequestLine.target,
                        version: parsedRequestLine.version,
                        host: hosts.first
                    )
                )
            }
            fieldCount += 1
            guard fieldCount <= limits.maximumFieldCount else { return .invalid(.tooManyFields) }
            guard let (name, value) = field(line) else { return .invalid(.malformedField) }
            if name.count == 4 && name.elementsEqual("host".utf8, by: { lowercased($0) == $1 }) {
                hosts.append(String(decoding: value, as: UTF8.self))
                guard hosts.count == 1 else { return .invalid(.badHost) }
            }
        }
        return bytes.count > limits.maximumBytes ? .invalid(.tooLarge) : .incomplete
    }

    /// The query's parameters, decoded as `application/x-www-form-urlencoded` (RFC 6749 section
    /// 4.1.2: `%HH` escapes, `+` a space); empty without a query.
    ///
    /// `nil` when a name appears twice (RFC 6749 section 3.1: parameters must not be repeated;
    /// taking either copy would let a forged one win) or when a name or value does not decode to
    /// UTF-8.
    var queryParameters: [String: String]? {
        guard let query else { return [:] }
        var parameters: [String: String] = [:]
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let equals = pair.firstIndex(of: "=")
            let rawName = equals.map { pair[..<$0] } ?? pair[...]
            let rawValue = equals.map { pair[pair.index(after: $0)...] } ?? ""
            guard let name = Self.formDecode(rawName), let value = Self.formDecode(rawValue),
                parameters.updateValue(value, forKey: name) == nil
            else {
                return nil
            }
        }
        return parameters
    }

    // MARK: - The parts

    private struct RequestLine {
        var method: String
        var target: String
        var version: Version
    }

    private static let carriageReturn = UInt8(ascii: "\r")
    private static let lineFeed = UInt8(ascii: "\n")
    private static let space = UInt8(ascii: " ")
    private static let tab = UInt8(ascii: "\t")

    /// `method SP request-target SP HTTP-version` (RFC 9112 section 3).
    private static func requestLine(_ line: ArraySlice<UInt8>) -> Result<RequestLine, Problem> {
        guard !line.contains(where: isControl) else { return .failure(.malformedLine) }
        let parts = line.split(separator: space, maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy(isTokenCharacter) else {
            return .failure(.malformedRequestLine)
        }
        let version: Version
        switch Array(parts[2]) {
        case Array("HTTP/1.1".utf8): version = .http1_1
        case Array("HTTP/1.0".utf8): version = .http1_0
        case let other where isVersionSyntax(other): return .failure(.unsupportedVersion)
        default: return .failure(.malformedRequestLine)
        }
        let target = parts[1]
        guard target.first == UInt8(ascii: "/") else {
            return .failure(target.isEmpty ? .malformedRequestLine : .targetNotInOriginForm)
        }
        guard isOriginFormTarget(target) else { return .failure(.malformedTarget) }
        return .success(
            RequestLine(
                method: String(decoding: parts[0], as: UTF8.self),
                target: String(decoding: target, as: UTF8.self),
                version: version
            )
        )
    }

    /// `field-name ":" OWS field-value OWS` (RFC 9112 section 5), returning the name and the
    /// trimmed value; `nil` for a folded line, a space before the colon, or a control byte.
    private static func field(_ line: ArraySlice<UInt8>) -> (ArraySlice<UInt8>, ArraySlice<UInt8>)? {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let name = line[..<colon]
        guard !name.isEmpty, name.allSatisfy(isTokenCharacter) else { return nil }
        var value = line[(colon + 1)...]
        guard !value.contains(where: { isControl($0) && $0 != tab }) else { return nil }
        while let first = value.first, first == space || first == tab { value = value.dropFirst() }
        while let last = value.last, last == space || last == tab { value = value.dropLast() }
        return (name, value)
    }

    /// `/` then visible ASCII other than `#`, each `%` followed by two hex digits.
    private static func isOriginFormTarget(_ target: ArraySlice<UInt8>) -> Bool {
        var index = target.startIndex
        while index < target.endIndex {
            let byte = target[index]
            guard (0x21...0x7E).contains(byte), byte != UInt8(ascii: "#") else { return false }
            if byte == UInt8(ascii: "%") {
                guard index + 2 < target.endIndex, isHexDigit(target[index + 1]), isHexDigit(target[index + 2])
                else {
                    return false
                }
                index += 3
            } else {
                index += 1
            }
        }
        return true
    }

    /// `HTTP/` DIGIT `.` DIGIT (RFC 9112 section 2.3).
    private static func isVersionSyntax(_ bytes: [UInt8]) -> Bool {
        bytes.count == 8 && bytes.starts(with: "HTTP/".utf8) && isDigit(bytes[5]) && bytes[6] == UInt8(ascii: ".")
            && isDigit(bytes[7])
    }

    /// A form-encoded name or value, decoded (`%HH` escapes, `+` a space); `nil` unless the
    /// bytes it spells are UTF-8.
    private static func formDecode(_ text: Substring) -> String? {
        PercentEncoding.decodedBytes(text, plusIsSpace: true, rejectingMalformed: false)
            .flatMap { String(validating: $0, as: UTF8.self) }
    }

    /// RFC 9110 `tchar`.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// C0 controls and DEL.
    private static func isControl(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x7F }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private static func isHexDigit(_ byte: UInt8) -> Bool { PercentEncoding.hexValue(byte) != nil }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }
}
