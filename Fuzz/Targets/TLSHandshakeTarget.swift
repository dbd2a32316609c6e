import Foundation

@testable import AuthRPCTransport

#if canImport(Glibc)
import Glibc
#endif

/// The TLS client's handshake (`TLSSession.handshake(over:)`: OpenSSL reading through
/// `CiphertextBIO`, a record at a time, from bytes lent for one pass and kept when unread) against
/// a hostile server's answer to its ClientHello. The answer waits in a socket pair whose server
/// end is then shut, read whole (one receive) and in pieces (the receive buffer the piece size).
///
/// Nothing is trusted, so no answer can complete the handshake: every run must fail, the same
/// way whole and in pieces (how ciphertext arrives cannot change what it means), with a message
/// that is printable and short.
///
/// Input: a byte (the piece size − 1), then the server's bytes.
enum TLSHandshakeTarget {
    /// The longest failure message shown: OpenSSL's reasons and ours are a line each.
    static let messageLimit = 400

    /// A context that trusts no root, offering `h2`; built once, as a channel builds its own.
    private static let context: Result<TLSContext, TransportFailure> = {
        var configuration = TLSClientConfiguration()
        configuration.trustsSystemRoots = false
        return Result { () throws(TransportFailure) in try TLSContext(configuration) }
    }()

    static func run(_ bytes: [UInt8]) throws(OracleViolation) {
        guard let first = bytes.first else { return }
        let answer = Array(bytes.dropFirst())
        let pieceSize = Int(first) + 1
        let whole = try handshake(answer, pieceSize: max(answer.count, 1))
        let pieces = try handshake(answer, pieceSize: pieceSize)
        for (outcome, how) in [(whole, "whole"), (pieces, "in pieces of \(pieceSize)")] {
            guard let failure = outcome else {
                throw OracleViolation("a handshake completed \(how) with nothing trusted")
            }
            try require(
                isPrintable(failure.description) && failure.description.utf8.count <= messageLimit,
                "a failure \(how) that is unprintable or over \(messageLimit) bytes: \(failure.description.debugDescription)"
            )
        }
        try require(
            whole == pieces,
            "whole: \(whole.map(String.init(describing:)) ?? "done"); in pieces of \(pieceSize): \(pieces.map(String.init(describing:)) ?? "done")"
        )
    }

    /// Runs one handshake whose server has sent `answer` and shut its end: the client's socket
    /// is one end of a socket pair, read through a buffer of `pieceSize` bytes. Nil when it
    /// completed.
    private static func handshake(_ answer: [UInt8], pieceSize: Int) throws(OracleViolation) -> TLSFailure? {
        let context = try context.mapError { OracleViolation("no TLS context: \($0)") }.get()
        var ends: [Int32] = [-1, -1]
        try require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0, "socketpair: errno \(errno)")
        let client = StreamSocket(fd: ends[0])
        defer {
            client.closeSocket()
            close(ends[1])
        }
        // The answer fits the socket's buffer (the target's longest input is far below it), so it
        // is all there before the client's first receive; the shutdown is the server's close.
        var sent = 0
        while sent < answer.count {
            let count = answer[sent...].withUnsafeBytes { Glibc.send(ends[1], $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            try require(count > 0, "the server end took \(sent) of \(answer.count) bytes: errno \(errno)")
            sent += count
        }
        shutdown(ends[1], Int32(SHUT_WR))

        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: pieceSize, alignment: 16)
        defer { scratch.deallocate() }
        do {
            let session = try TLSSession(context: context, serverName: "localhost", output: ByteQueue(capacity: 4096))
            try session.handshake(over: client, deadline: .now + .seconds(5), abortFD: -1, scratch: scratch)
            return nil
        } catch {
            guard case .tls(let failure) = error else {
                throw OracleViolation("a failure that is not TLS's: \(error)")
            }
            return failure
        }
    }
}
