internal import COpenSSL

/// The ciphertext side of a TLS session as OpenSSL sees it: a BIO that reads the bytes the socket
/// delivered where they lie, a record per read, and writes each record straight into the
/// connection's output queue.
///
/// A pair of memory BIOs cost two more copies of every byte: in, ciphertext copied into the BIO
/// (whose growing buffer was zeroed first) and then out of it into OpenSSL's record buffer; out,
/// records written into the BIO and then read out of it into the queue. Here the only copies are
/// OpenSSL's own.
final class CiphertextBIO {
    /// The BIO, owned by the `SSL` it is set on (`SSL_free` frees it).
    let bio: OpaquePointer
    /// Where every record OpenSSL produces goes, in the order it produces them (handshake
    /// messages, data, alerts, key updates).
    let output: ByteQueue
    /// Ciphertext lent by ``lending(_:_:)``, valid only while it runs.
    private var lent = UnsafeRawBufferPointer(start: nil, count: 0)
    /// Ciphertext handed over with ``keep(_:)``, or lent and not read before the loan ended: read
    /// before any lent bytes. Nil until needed; in the steady state OpenSSL reads everything lent.
    private var kept: ByteQueue?
    /// Where the bytes read so far leave the stream of records: a read ends with a record.
    private var boundary = TLSRecordBoundary()

    init(output: ByteQueue) {
        // A BIO_new that fails is out of memory at a connection's start, as Swift's own
        // allocations would be.
        bio = BIO_new(Self.method)!
        self.output = output
        BIO_set_data(bio, Unmanaged.passUnretained(self).toOpaque())
        BIO_set_init(bio, 1)
    }

    /// Runs `body` (OpenSSL's reads) with `ciphertext` readable; what OpenSSL has not read when
    /// `body` returns is copied and read first next time, so no lent byte outlives its loan.
    func lending<Result, Failure: Error>(
        _ ciphertext: UnsafeRawBufferPointer,
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        lent = ciphertext
        defer {
            if !lent.isEmpty { keep(lent) }
            lent = UnsafeRawBufferPointer(start: nil, count: 0)
        }
        return try body()
    }

    /// Copies `ciphertext` for OpenSSL's next reads (bytes that arrived before the session began).
    func keep(_ ciphertext: UnsafeRawBufferPointer) {
        guard !ciphertext.isEmpty else { return }
        let queue = kept ?? ByteQueue(capacity: max(ciphertext.count, 4096))
        kept = queue
        queue.append(ciphertext)
    }

    /// Bytes OpenSSL can read now.
    private var readable: Int { (kept?.count ?? 0) + lent.count }

    /// Copies up to `capacity` readable bytes to `target`, kept bytes first, and no further than
    /// the end of the record they are in; 0 when there are none. (What OpenSSL's reads call;
    /// internal for the tests.)
    func read(into target: UnsafeMutableRawPointer, capacity: Int) -> Int {
        var copied = 0
        if let kept, case let available = kept.readable, !available.isEmpty {
            copied = boundary.pass(UnsafeRawBufferPointer(rebasing: available.prefix(capacity)))
            target.copyMemory(from: available.baseAddress!, byteCount: copied)
            kept.consume(copied)
            if boundary.atRecordStart { return copied }
        }
        let fromLoan = boundary.pass(UnsafeRawBufferPointer(rebasing: lent.prefix(capacity - copied)))
        if fromLoan > 0 {
            (target + copied).copyMemory(from: lent.baseAddress!, byteCount: fromLoan)
            lent = UnsafeRawBufferPointer(rebasing: lent[fromLoan...])
            copied += fromLoan
        }
        return copied
    }

    /// Runs `body` with the BIO's owner, without a retain: the session keeps it alive for as
    /// long as OpenSSL can call the BIO.
    private static func withInstance<Result>(_ bio: OpaquePointer, _ body: (CiphertextBIO) -> Result) -> Result {
        Unmanaged<CiphertextBIO>.fromOpaque(BIO_get_data(bio))._withUnsafeGuaranteedRef(body)
    }

    // Written once by the lazy initializer (which Swift runs exactly once) and never changed: OpenSSL
    // only reads a BIO_METHOD, from any thread.
    nonisolated(unsafe) private static let method: OpaquePointer = {
        let method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "authrpc ciphertext")!
        _ = BIO_meth_set_read(method, read)
        _ = BIO_meth_set_write(method, write)
        _ = BIO_meth_set_ctrl(method, control)
        return method
    }()

    /// Nothing readable is "retry" (SSL_ERROR_WANT_READ), never an end of file: the connection
    /// learns of the socket's end from the socket.
    private static let read: @convention(c) (OpaquePointer?, UnsafeMutablePointer<CChar>?, Int32) -> Int32 = {
        bio,
        buffer,
        length in
        guard let bio, let buffer, length > 0 else { return 0 }
        copenssl_bio_clear_retry_flags(bio)
        let count = CiphertextBIO.withInstance(bio) { $0.read(into: buffer, capacity: Int(length)) }
        guard count > 0 else {
            copenssl_bio_set_retry_read(bio)
            return -1
        }
        return Int32(count)
    }

    /// Every record is taken whole: the output queue grows to hold it (what OpenSSL writes is
    /// what the connection gathered from nghttp2 to send, or a handshake message or alert).
    private static let write: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 = {
        bio,
        bytes,
        length in
        guard let bio, let bytes, length > 0 else { return 0 }
        copenssl_bio_clear_retry_flags(bio)
        CiphertextBIO.withInstance(bio) { $0.output.append(UnsafeRawBufferPointer(start: bytes, count: Int(length))) }
        return length
    }

    /// A flush has nothing to do (the connection sends the queue); pending input is what is
    /// readable; nothing else is supported.
    private static let control: @convention(c) (OpaquePointer?, Int32, Int, UnsafeMutableRawPointer?) -> Int = {
        bio,
        command,
        _,
        _ in
        guard let bio else { return 0 }
        switch command {
        case BIO_CTRL_FLUSH: return 1
        case BIO_CTRL_PENDING: return CiphertextBIO.withInstance(bio) { $0.readable }
        default: return 0
        }
    }
}
