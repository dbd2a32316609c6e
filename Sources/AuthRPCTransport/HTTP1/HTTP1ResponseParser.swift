/// Reads one HTTP/1.1 response (RFC 9112) as its bytes arrive, with bounds on every part a peer
/// controls: the status line, the number and bytes of header fields (trailers included), the
/// informational (1xx) answers before the final one, chunk-size lines, and the body. The framing
/// is RFC 9112 section 6.3's: no body after HEAD, 1xx, 204 and 304; `Transfer-Encoding: chunked`;
/// `Content-Length`; else the body runs to the end of the connection. Ambiguous framing
/// (`Transfer-Encoding` with `Content-Length`, differing lengths, a coding other than chunked)
/// is refused, not guessed at.
///
/// A value without I/O: ``HTTP1Exchange`` feeds it what the socket delivers.
struct HTTP1ResponseParser {
    /// The bounds; the defaults are generous for token, discovery and metadata answers.
    struct Limits: Sendable {
        /// The longest status line or chunk-size line.
        var maximumLineBytes = 8 << 10
        /// The most bytes of header fields, in the final head and the trailers together.
        var maximumHeaderBytes = 64 << 10
        /// The most header fields, trailers included.
        var maximumFields = 100
        /// The most 1xx answers before the final one.
        var maximumInformational = 8
        /// The largest body.
        var maximumBodyBytes: Int

        init(maximumBodyBytes: Int) {
            self.maximumBodyBytes = maximumBodyBytes
        }
    }

    /// What the parser says after taking bytes in.
    enum Progress: Equatable {
        /// More bytes are needed.
        case needsMore
        /// The response is complete (bytes after it are ignored: the connection closes).
        case complete
    }

    private enum State {
        case statusLine
        case headers
        case fixedBody(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case bodyUntilClose
        case complete
    }

    private let limits: Limits
    private let isHeadRequest: Bool
    private var state = State.statusLine
    private var buffer: [UInt8] = []
    /// How many bytes of the unfinished line at the start of `buffer` are known to hold no line
    /// feed: a line trickled in a byte at a time is searched once, not once per byte.
    private var searchedLineBytes = 0
    private var informational = 0
    private var fields = 0
    private var headerBytes = 0

    private(set) var status = 0
    private(set) var headers: [(name: String, value: String)] = []
    private(set) var body: [UInt8] = []

    /// The bytes taken in and held unread (a line not yet ended): after each ``receive(_:)``, never
    /// more than the longest line allowed.
    var unreadBytes: Int { buffer.count }

    /// Whether the body, being read, ends only when the connection does (no length, not chunked).
    var bodyRunsToClose: Bool {
        if case .bodyUntilClose = state { return true }
        return false
    }

    init(limits: Limits, isHeadRequest: Bool = false) {
        self.limits = limits
        self.isHeadRequest = isHeadRequest
    }

    /// Takes `bytes` in.
    ///
    /// - Throws: ``TransportFailure/responseBodyTooLarge(limit:)`` past the body limit (an announced
    ///   `Content-Length` over it fails before any body byte is read);
    ///   ``TransportFailure/responseHeaderListTooLarge(limit:)`` past the header bytes;
    ///   ``TransportFailure/protocolError(_:)`` for anything else that is not a valid response,
    ///   described printably.
    mutating func receive<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws(TransportFailure) -> Progress {
        buffer.append(contentsOf: bytes)
        var offset = 0
        defer { buffer.removeFirst(offset) }
        while true {
            switch state {
            case .complete:
                offset = buffer.count  // what follows the response is not kept
                return .complete
            case .statusLine, .headers, .chunkSize, .chunkDataEnd, .trailers:
                guard let (line, next) = try nextLine(from: offset) else { return .needsMore }
                offset = next
                try take(line)
            case .fixedBody(let remaining):
                let count = min(remaining, buffer.count - offset)
                guard count > 0 else { return .needsMore }
                try appendBody(buffer[offset..<offset + count])
                offset += count
                state = remaining == count ? .complete : .fixedBody(remaining: remaining - count)
            case .chunkData(let remaining):
                let count = min(remaining, buffer.count - offset)
                guard count > 0 else { return .needsMore }
                try appendBody(buffer[offset..<offset + count])
                offset += count
                state = remaining == count ? .chunkDataEnd : .chunkData(remaining: remaining - count)
            case .bodyUntilClose:
                if offset < buffer.count {
                    try appendBody(buffer[offset...])
                    offset = buffer.count
                }
                return .needsMore
            }
        }
    }

    /// The connection ended: the response is complete only if its body runs to the close.
    ///
    /// - Throws: ``TransportFailure/connectionClosed(reason:streamWasSent:)`` naming what was cut short.
    mutating func finish() throws(TransportFailure) {
        switch state {
        case .complete:
            return
        case .bodyUntilClose:
            state = .complete
        case .statusLine where status == 0 && buffer.isEmpty && informational == 0:
            throw .connectionClosed(reason: "the server closed the connection without answering", streamWasSent: true)
        case .statusLine, .headers:
            throw .connectionClosed(
                reason: "the server closed the connection in the middle of the response's header",
                streamWasSent: true
            )
        case .fixedBody(let remaining):
            throw .connectionClosed(
                reason: "the server closed the connection with \(remaining) bytes of the body still to come",
                streamWasSent: true
            )
        case .chunkSize, .chunkData, .chunkDataEnd, .trailers:
            throw .connectionClosed(
                reason: "the server closed the connection in the middle of a chunked body",
                streamWasSent: true
            )
        }
    }

    // MARK: - Lines

    /// The next line (without its CR LF or LF) and the offset after it, or nil when it is not
    /// all here yet.
    private mutating func nextLine(from offset: Int) throws(TransportFailure) -> (ArraySlice<UInt8>, Int)? {
        // Only a call that starts at the line `searchedLineBytes` describes may skip them: the
        // unfinished line is always at offset 0 of the next `receive`.
        let searchFrom = offset == 0 ? searchedLineBytes : offset
        guard let newline = buffer[searchFrom...].firstIndex(of: UInt8(ascii: "\n")) else {
            // A final CR may be the start of the line's CR LF: a line at the limit is not refused
            // for it when the pieces happen to split between the two.
            let pending = buffer.count - offset - (buffer.last == UInt8(ascii: "\r") ? 1 : 0)
            if pending > limits.maximumLineBytes { throw lineTooLong() }
            searchedLineBytes = buffer.count - offset
            return nil
        }
        searchedLineBytes = 0
        var end = newline
        if end > offset && buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        if end - offset > limits.maximumLineBytes { throw lineTooLong() }
        return (buffer[offset..<end], newline + 1)
    }

    private func lineTooLong() -> TransportFailure {
        switch state {
        case .headers, .trailers:
            return .responseHeaderListTooLarge(limit: limits.maximumHeaderBytes)
        default:
            return .protocolError("the server sent a line longer than \(limits.maximumLineBytes) bytes")
        }
    }

    private mutating func take(_ line: ArraySlice<UInt8>) throws(TransportFailure) {
        switch state {
        case .statusLine:
            guard let code = HTTP1Syntax.statusCode(line) else {
                throw .protocolError("the answer is not HTTP/1.1: '\(Printable.bytes(line, limit: 120))'")
            }
            status = code
            state = .headers
        case .headers:
            if line.isEmpty {
                try headEnded()
            } else {
                headers.append(try field(line))
            }
        case .chunkSize:
            // chunk-size [ BWS ; extensions ]: hex digits only (a sign would leave a negative size
            // that buffers the rest of the connection); the extensions are skipped.
            var sizeText = line.prefix { $0 != UInt8(ascii: ";") }
            if sizeText.count < line.count {
                while let last = sizeText.last, last == UInt8(ascii: " ") || last == 9 {
                    sizeText = sizeText.dropLast()
                }
            }
            guard let size = HTTP1Syntax.number(sizeText, radix: 16, maximumDigits: 15) else {
                throw .protocolError("malformed chunk size '\(Printable.bytes(line, limit: 60))'")
            }
            if size > limits.maximumBodyBytes - body.count {
                throw .responseBodyTooLarge(limit: limits.maximumBodyBytes)
            }
            state = size == 0 ? .trailers : .chunkData(remaining: size)
        case .chunkDataEnd:
            guard line.isEmpty else { throw .protocolError("a chunk is longer than its size says") }
            state = .chunkSize
        case .trailers:
            if line.isEmpty {
                state = .complete
            } else {
                _ = try field(line)  // trailers count against the bounds, then are dropped
            }
        case .fixedBody, .chunkData, .bodyUntilClose, .complete:
            break
        }
    }

    /// One header or trailer field, counted against the bounds.
    private mutating func field(_ line: ArraySlice<UInt8>) throws(TransportFailure) -> (name: String, value: String) {
        fields += 1
        headerBytes += line.count + 2
        guard fields <= limits.maximumFields else {
            throw .protocolError("the response has more than \(limits.maximumFields) header fields")
        }
        guard headerBytes <= limits.maximumHeaderBytes else {
            throw .responseHeaderListTooLarge(limit: limits.maximumHeaderBytes)
        }
        guard let field = HTTP1Syntax.field(line) else {
            throw .protocolError("malformed header line '\(Printable.bytes(line, limit: 120))'")
        }
        return field
    }

    /// The empty line after the header: a 1xx answer starts over; a final one picks the framing.
    private mutating func headEnded() throws(TransportFailure) {
        if (100..<200).contains(status) {
            guard status != 101 else { throw .protocolError("the server switched protocols (101), unasked") }
            informational += 1
            guard informational <= limits.maximumInformational else {
                throw .protocolError("the server sent more than \(limits.maximumInformational) informational answers")
            }
            headers.removeAll()
            status = 0
            state = .statusLine
            return
        }
        if isHeadRequest || status == 204 || status == 304 {
            state = .complete
            return
        }
        let encodings = values("transfer-encoding")
        let lengths = values("content-length")
        if !encodings.isEmpty {
            guard lengths.isEmpty else {
                throw .protocolError("the response has both Transfer-Encoding and Content-Length")
            }
            let codings = encodings.flatMap { $0.split(separator: ",") }.map {
                String($0).trimmingCharacters(in: " \t").lowercased()
            }
            guard codings == ["chunked"] else {
                throw .protocolError(
                    "unsupported transfer coding '\(Printable.text(encodings.joined(separator: ", "), limit: 60))'"
                )
            }
            state = .chunkSize
            return
        }
        if !lengths.isEmpty {
            let parts = lengths.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: " \t") }
            guard let first = parts.first, parts.allSatisfy({ $0 == first }),
                let length = HTTP1Syntax.number(first.utf8, radix: 10, maximumDigits: 15)
            else {
                throw .protocolError(
                    "malformed Content-Length '\(Printable.text(lengths.joined(separator: ", "), limit: 60))'"
                )
            }
            guard length <= limits.maximumBodyBytes else { throw .responseBodyTooLarge(limit: limits.maximumBodyBytes) }
            state = length == 0 ? .complete : .fixedBody(remaining: length)
            return
        }
        state = .bodyUntilClose
    }

    private func values(_ name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name }.map(\.value)
    }

    private mutating func appendBody(_ bytes: ArraySlice<UInt8>) throws(TransportFailure) {
        guard body.count + bytes.count <= limits.maximumBodyBytes else {
            throw .responseBodyTooLarge(limit: limits.maximumBodyBytes)
        }
        body.append(contentsOf: bytes)
    }
}

extension String {
    /// Without the leading and trailing characters in `set`.
    fileprivate func trimmingCharacters(in set: String) -> String {
        guard let start = firstIndex(where: { !set.contains($0) }) else { return "" }
        let end = lastIndex(where: { !set.contains($0) })!
        return String(self[start...end])
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        String(self).trimmingCharacters(in: set)
    }
}
