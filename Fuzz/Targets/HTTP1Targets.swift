@testable import AuthRPCTransport

/// `ProxyConnectAnswer`: a proxy's answer to CONNECT, fed whole and in pieces.
///
/// Input: one byte (the piece size, 1…256), then the proxy's bytes.
enum ProxyConnectAnswerTarget {
    static func run(_ bytes: [UInt8]) throws(OracleViolation) {
        guard let first = bytes.first else { return }
        let answer = Array(bytes.dropFirst())
        var whole = ProxyConnectAnswer()
        let wholeOutcome = whole.receive(answer)
        var pieces = ProxyConnectAnswer()
        var pieceOutcome = ProxyConnectAnswer.Outcome.needsMore
        var offset = 0
        let size = Int(first) + 1
        while offset < answer.count, pieceOutcome == .needsMore {
            pieceOutcome = pieces.receive(answer[offset..<min(offset + size, answer.count)])
            offset += size
        }
        switch (wholeOutcome, pieceOutcome) {
        case (.established(let a), .established(let b)):
            try require(a == b, "the tunnel starts at \(a) whole but at \(b) in pieces")
            try require(a <= answer.count, "the tunnel starts past the input")
        case (.refused(let a, let lineA), .refused(let b, let lineB)):
            try require(a == b && lineA == lineB, "refused differently whole and in pieces")
            try require(isPrintable(lineA), "a status line shown with unprintable bytes")
        case (.malformed(let reason), .malformed(let other)):
            try require(isPrintable(reason) && isPrintable(other), "a reason with unprintable bytes")
        case (.needsMore, .needsMore):
            break
        default:
            throw OracleViolation("whole: \(wholeOutcome); in pieces of \(size): \(pieceOutcome)")
        }
    }
}

/// `HTTP1ResponseParser`: an HTTP/1.1 response (1000-byte body limit, 200-byte lines), fed whole
/// and in pieces, then the connection closed. After every piece, what the parser holds unread is
/// at most one line (a negative chunk size once had it buffer every following byte).
///
/// Input: one byte (bit 0: a HEAD request; the rest: the piece size − 1), then the response.
enum HTTP1ResponseTarget {
    static let limit = 1000
    static let lineLimit = 200
    /// The most the parser may hold unread: a line at the limit and the CR of its CR LF.
    static let heldLimit = lineLimit + 1

    static func run(_ bytes: [UInt8]) throws(OracleViolation) {
        guard let first = bytes.first else { return }
        let response = Array(bytes.dropFirst())
        let head = first & 1 == 1
        let whole = try parse(response, pieceSize: response.count + 1, head: head)
        let pieces = try parse(response, pieceSize: Int(first >> 1) + 1, head: head)
        switch (whole, pieces) {
        case (.success(let a), .success(let b)):
            try require(a.status == b.status && a.body == b.body, "answers differ whole and in pieces")
            try require(a.body.count <= limit, "a body of \(a.body.count) bytes over the limit of \(limit)")
            try require((100...999).contains(a.status) && !(100..<200).contains(a.status), "final status \(a.status)")
        case (.failure(let a), .failure(let b)):
            try require(isPrintable(a.description) && isPrintable(b.description), "an error with unprintable bytes")
        default:
            throw OracleViolation("whole: \(whole); in pieces: \(pieces)")
        }
    }

    private static func parse(
        _ bytes: [UInt8],
        pieceSize: Int,
        head: Bool
    ) throws(OracleViolation) -> Result<HTTP1ResponseParser, TransportFailure> {
        var limits = HTTP1ResponseParser.Limits(maximumBodyBytes: limit)
        limits.maximumLineBytes = lineLimit
        var parser = HTTP1ResponseParser(limits: limits, isHeadRequest: head)
        var offset = 0
        var complete = false
        do throws(TransportFailure) {
            while offset < bytes.count, !complete {
                complete = try parser.receive(bytes[offset..<min(offset + pieceSize, bytes.count)]) == .complete
                offset += pieceSize
                guard parser.unreadBytes <= heldLimit, parser.body.count <= limit else { break }
            }
            if !complete, parser.unreadBytes <= heldLimit { try parser.finish() }
        } catch {
            return .failure(error)
        }
        try require(
            parser.unreadBytes <= heldLimit,
            "\(parser.unreadBytes) bytes held unread after a read (the longest line is \(lineLimit), then CR)"
        )
        return .success(parser)
    }
}
