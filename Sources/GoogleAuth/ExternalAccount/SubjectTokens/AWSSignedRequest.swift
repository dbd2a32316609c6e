import AuthCrypto
import Foundation
import OAuth2

/// An AWS STS `GetCallerIdentity` request signed with AWS Signature Version 4: an AWS source's
/// subject token. Google's Security Token Service sends the request to AWS, whose answer proves
/// which AWS identity signed it; the request itself never leaves this process otherwise.
///
/// Signed as google-auth signs it: `POST` to the file's `regional_cred_verification_url` (its
/// `{region}` filled in), no body, the signed headers `host`, `x-amz-date` and, with temporary
/// credentials, `x-amz-security-token`; the credential scope `DATE/REGION/SERVICE/aws4_request`,
/// the service being the first label of the host (`sts`, `-fips` removed). Then
/// `x-goog-cloud-target-resource` (the pool provider's audience, unsigned) is added, and the
/// request is serialised as google-auth does: compact JSON with sorted keys,
/// `{"headers":[{"key":...,"value":...},...],"method":"POST","url":...}`, percent-encoded as
/// Python's `urllib.parse.quote` encodes (everything but letters, digits, `_.-~` and `/`).
struct AWSSignedRequest: Equatable {
    /// AWS security credentials: an access key and, for temporary ones, a session token.
    struct Credentials: Equatable, CustomStringConvertible {
        var accessKeyID: String
        var secretAccessKey: String
        var sessionToken: String?

        /// The access key id (not secret); never the secret key or session token.
        var description: String {
            "AWS credentials \(accessKeyID)\(sessionToken == nil ? "" : " (temporary)")"
        }
    }

    static let algorithm = "AWS4-HMAC-SHA256"

    /// The URL signed.
    var url: String
    /// `POST`.
    var method: String
    /// The headers, in google-auth's order: `Authorization`, `host`, `x-amz-date`,
    /// `x-amz-security-token` (temporary credentials), `x-goog-cloud-target-resource`.
    var headers: [(key: String, value: String)]

    static func == (lhs: AWSSignedRequest, rhs: AWSSignedRequest) -> Bool {
        lhs.url == rhs.url && lhs.method == rhs.method && lhs.headers.elementsEqual(rhs.headers, by: ==)
    }

    /// Why a request could not be signed.
    struct Failure: Error, Equatable {
        var reason: String
    }

    /// Signs `GetCallerIdentity` at `url` (the verification URL with the region filled in) for
    /// `region` at `date`, for the pool provider `targetResource`.
    static func getCallerIdentity(
        url: String,
        region: String,
        credentials: Credentials,
        targetResource: String,
        date: Date
    ) throws(Failure) -> AWSSignedRequest {
        let method = "POST"
        guard let components = URLComponents(string: url), components.scheme?.lowercased() == "https",
            let host = components.host?.lowercased(), !host.isEmpty
        else { throw Failure(reason: "the verification URL is not an https URL with a host") }

        let (amzDate, dateStamp) = timestamps(date)
        var service = String(host.split(separator: ".", maxSplits: 1).first ?? "")
        if service.hasSuffix("-fips") { service.removeLast(5) }

        var signedHeaders: [(String, String)] = [("host", host), ("x-amz-date", amzDate)]
        if let token = credentials.sessionToken { signedHeaders.append(("x-amz-security-token", token)) }
        signedHeaders.sort { $0.0 < $1.0 }
        let canonicalHeaders = signedHeaders.map { "\($0.0):\($0.1)\n" }.joined()
        let signedHeaderNames = signedHeaders.map(\.0).joined(separator: ";")

        let canonicalRequest = [
            method,
            canonicalPath(components.percentEncodedPath),
            canonicalQuery(components.percentEncodedQuery ?? ""),
            canonicalHeaders,
            signedHeaderNames,
            hex(try sha256([])),
        ].joined(separator: "\n")
        let scope = "\(dateStamp)/\(region)/\(service)/aws4_request"
        let stringToSign = [algorithm, amzDate, scope, hex(try sha256(Array(canonicalRequest.utf8)))]
            .joined(separator: "\n")

        var key = try hmac(Array("AWS4\(credentials.secretAccessKey)".utf8), dateStamp)
        for part in [region, service, "aws4_request"] { key = try hmac(key, part) }
        let signature = hex(try hmac(key, stringToSign))

        var headers: [(key: String, value: String)] = [
            (
                "Authorization",
                "\(algorithm) Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(signedHeaderNames), Signature=\(signature)"
            ),
            ("host", host),
            ("x-amz-date", amzDate),
        ]
        if let token = credentials.sessionToken { headers.append(("x-amz-security-token", token)) }
        headers.append(("x-goog-cloud-target-resource", targetResource))
        return AWSSignedRequest(url: url, method: method, headers: headers)
    }

    /// The subject token: the request as percent-encoded compact JSON with sorted keys.
    var subjectToken: String {
        var json = "{\"headers\":["
        json += headers.map { "{\"key\":\(Self.jsonString($0.key)),\"value\":\(Self.jsonString($0.value))}" }
            .joined(separator: ",")
        json += "],\"method\":\(Self.jsonString(method)),\"url\":\(Self.jsonString(url))}"
        return Self.quote(json)
    }

    // MARK: - Canonical forms

    /// `%Y%m%dT%H%M%SZ` and `%Y%m%d` in UTC.
    static func timestamps(_ date: Date) -> (amzDate: String, dateStamp: String) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ value: Int?) -> String {
            let v = value ?? 0
            return v < 10 ? "0\(v)" : "\(v)"
        }
        let day = "\(parts.year ?? 1970)\(two(parts.month))\(two(parts.day))"
        return ("\(day)T\(two(parts.hour))\(two(parts.minute))\(two(parts.second))Z", day)
    }

    /// The path with `.` and `..` segments resolved and duplicate slashes removed, `/` when empty
    /// (what google-auth's `posixpath.normpath` gives).
    static func canonicalPath(_ path: String) -> String {
        var segments: [Substring] = []
        for segment in path.split(separator: "/", omittingEmptySubsequences: true) {
            if segment == "." { continue }
            if segment == ".." {
                if !segments.isEmpty { segments.removeLast() }
                continue
            }
            segments.append(segment)
        }
        return "/" + segments.joined(separator: "/")
    }

    /// Query pairs decoded, then each name and value percent-encoded (all but `A-Za-z0-9-_.~`),
    /// sorted by name and then value, pairs without a value left out (as Python's `parse_qs` does).
    static func canonicalQuery(_ query: String) -> String {
        var pairs: [(String, String)] = []
        for part in query.split(separator: "&", omittingEmptySubsequences: true) {
            let equals = part.firstIndex(of: "=")
            let name = decode(equals.map { part[..<$0] } ?? part[...])
            let value = equals.map { decode(part[part.index(after: $0)...]) } ?? ""
            if value.isEmpty { continue }
            pairs.append((quote(name, safe: ""), quote(value, safe: "")))
        }
        pairs.sort { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
        return pairs.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    }

    /// `+` as space, then `%XX` decoded (invalid escapes kept), as `parse_qs` reads a query.
    private static func decode(_ text: Substring) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    /// Python's `urllib.parse.quote`: every UTF-8 byte but `A-Za-z0-9_.-~` and those in `safe`
    /// written as `%XX` (uppercase hex).
    static func quote(_ text: String, safe: String = "/") -> String {
        let safeBytes = Set(safe.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        let digits = Array("0123456789ABCDEF".utf8)
        for byte in text.utf8 {
            let unreserved =
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: "~")
            if unreserved || safeBytes.contains(byte) {
                output.append(byte)
            } else {
                output += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// A JSON string as Python's `json.dumps` writes it (ASCII only: `\uXXXX` beyond, UTF-16
    /// surrogate pairs above the BMP; `/` not escaped).
    static func jsonString(_ text: String) -> String {
        var output = "\""
        for unit in text.utf16 {
            switch unit {
            case 0x22: output += "\\\""
            case 0x5C: output += "\\\\"
            case 0x0A: output += "\\n"
            case 0x0D: output += "\\r"
            case 0x09: output += "\\t"
            case 0x08: output += "\\b"
            case 0x0C: output += "\\f"
            case 0x20..<0x7F: output.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
            default:
                let hex = String(unit, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }
        return output + "\""
    }

    private static func sha256(_ bytes: [UInt8]) throws(Failure) -> [UInt8] {
        do { return try SHA256.hash(bytes) } catch { throw Failure(reason: "SHA-256 failed: \(error)") }
    }

    private static func hmac(_ key: [UInt8], _ message: String) throws(Failure) -> [UInt8] {
        do { return try HMAC.sha256(key: key, message: Array(message.utf8)) } catch {
            throw Failure(reason: "HMAC-SHA256 failed: \(error)")
        }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
    }
}
