/// One HTTP/1.1 request, sent on a connection of its own (`Connection: close`): for the few
/// requests that are not gRPC (token, metadata and discovery endpoints).
package struct HTTP1Request: Sendable {
    /// `GET`, `POST`, … (a token).
    package var method: String
    /// The request target: the path and query, percent-encoded (`/token?x=1`); `/` when empty.
    package var path: String
    /// The server's host (a name or an IP literal, IPv6 without brackets) and port, for `Host`.
    package var target: HostAndPort
    /// Header fields, in order. `Host`, `Content-Length` and `Connection` are the exchange's own
    /// and must not be among them.
    package var headers: [(name: String, value: String)]
    /// The body; sent with `Content-Length` when there is one (or the method is POST or PUT).
    package var body: [UInt8]?
    /// When the whole exchange (connecting, TLS, sending, every byte of the answer) must be over.
    package var deadline: ContinuousClock.Instant
    /// The largest response body accepted.
    package var maximumResponseBodyBytes: Int

    package init(
        method: String,
        path: String,
        target: HostAndPort,
        headers: [(name: String, value: String)] = [],
        body: [UInt8]? = nil,
        deadline: ContinuousClock.Instant,
        maximumResponseBodyBytes: Int
    ) {
        self.method = method
        self.path = path
        self.target = target
        self.headers = headers
        self.body = body
        self.deadline = deadline
        self.maximumResponseBodyBytes = maximumResponseBodyBytes
    }

    /// The request's bytes, or the reason they cannot be written (a field that would break a
    /// line, a method or path with spaces).
    func serialized(defaultPort: Int) -> Result<[UInt8], TransportFailure> {
        func refuse(_ reason: String) -> Result<[UInt8], TransportFailure> { .failure(.invalidRequest(reason)) }
        guard !method.isEmpty, method.utf8.allSatisfy(HTTP1Syntax.isTokenByte) else {
            return refuse("the method '\(Printable.text(method, limit: 20))' is not a token")
        }
        let path = self.path.isEmpty ? "/" : self.path
        guard path.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return refuse("the request path holds spaces, controls or bytes past ASCII")
        }
        var text = "\(method) \(path) HTTP/1.1\r\n"
        let host = target.host.contains(":") ? "[\(target.host)]" : target.host
        guard host.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return refuse("the host holds spaces, controls or bytes past ASCII")
        }
        text += "Host: \(host)\(target.port == defaultPort ? "" : ":\(target.port)")\r\n"
        for (name, value) in headers {
            guard !name.isEmpty, name.utf8.allSatisfy(HTTP1Syntax.isTokenByte) else {
                return refuse("the header name '\(Printable.text(name, limit: 40))' is not a token")
            }
            guard ["host", "content-length", "connection", "transfer-encoding"].contains(name.lowercased()) == false
            else {
                return refuse("the header '\(name)' is the exchange's own")
            }
            guard value.utf8.allSatisfy({ $0 == 9 || ($0 >= 0x20 && $0 != 0x7F) }) else {
                return refuse("the value of the header '\(name)' holds a line break or a control character")
            }
            text += "\(name): \(value)\r\n"
        }
        if let body {
            text += "Content-Length: \(body.count)\r\n"
        } else if method == "POST" || method == "PUT" {
            text += "Content-Length: 0\r\n"
        }
        text += "Connection: close\r\n\r\n"
        return .success(Array(text.utf8) + (body ?? []))
    }
}

/// The answer to an ``HTTP1Request``.
package struct HTTP1Response: Sendable {
    /// The final status (1xx answers before it are skipped).
    package var status: Int
    /// The header fields, in order, names as sent.
    package var headers: [(name: String, value: String)]
    /// The whole body (chunked bodies already joined).
    package var body: [UInt8]
}
