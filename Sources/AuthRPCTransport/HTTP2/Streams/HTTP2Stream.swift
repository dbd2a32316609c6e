import AuthRPCSystem

/// One request/response exchange on the connection.
///
/// Taken by the calling task (new, or a spare one the I/O thread reset and left in the inbox,
/// under its lock), which sets the request and ``completion`` and then hands the stream to the
/// I/O thread through the connection's locked inbox, or submits it itself on the session it
/// borrowed from the sleeping I/O thread through the same lock (ConnectionLoop+SessionLoan); the
/// lock orders the two. From then on only the thread holding the session reads or writes it,
/// which is what makes the `@unchecked Sendable` true. A cancel
/// command can reach the I/O thread before the submit; it then touches only `generation`, `id`
/// and `cancelledBeforeSubmit`, which the calling task never writes. A cancel command that comes
/// late, for an exchange the stream no longer carries, is told apart by its `generation`.
final class HTTP2Stream: @unchecked Sendable {
    /// The answer and whether the final header block had arrived by then, handed over together:
    /// the calling task reads nothing of the stream after it resumes (the resume is ordered by
    /// atomics inside the concurrency runtime, which ThreadSanitizer cannot see: ``finish(_:)``
    /// and ``HTTP2Exchange/received(_:)`` show it the hand-off).
    typealias Completion = UnsafeContinuation<Answer, Never>
    typealias Answer = HTTP2Exchange.Answer

    /// The request; its header block is let go once submitted, its body once nghttp2 has taken
    /// all of it.
    private(set) var request: HTTP2Request

    // The stored properties are ordered for size, not by topic. The flags fill the 7 bytes the
    // request's last field (a 9-byte optional) leaves over; the 2- and 4-byte fields come next
    // (four of them narrowed behind `Int` accessors), then the 8-byte ones. The stream is then
    // 248 bytes, which glibc keeps in a 256-byte chunk instead of a 320-byte one: 64 bytes less
    // for every call in flight. `StreamLayoutTests.fitsChunk` holds it there.

    /// The stream is waiting to be reset over its body limit: it is not reused before that.
    var pendingReset = false
    /// The caller gave up before the I/O thread submitted the stream.
    var cancelledBeforeSubmit = false
    /// This stream's HEADERS left the client (so the server may have processed it).
    var headersSent = false
    /// The server ended its side (END_STREAM seen).
    var remoteEnded = false
    /// The server sent RST_STREAM for this stream (nghttp2 resets streams itself when a response
    /// breaks HTTP/2's rules, a content-length mismatch say: those are not the server's resets).
    var resetByServer = false
    /// The final (non-1xx) header block is complete; later fields are trailers.
    var sawFinalHeaders = false
    /// The block being received is a 1xx response; its fields are dropped.
    var inInformationalBlock = false
    /// The final header block also ended the stream (a trailers-only response).
    var endedWithHeaders = false
    /// ``status`` and ``informationalBlocks``, stored narrow (a status has three digits, and the
    /// loop fails a response past a handful of 1xx blocks).
    private var storedStatus: Int16 = 0
    private var storedInformationalBlocks: Int16 = 0
    /// Which exchange the stream carries: bumped each time the I/O thread readies it for reuse,
    /// so a cancel meant for an earlier exchange is ignored.
    private(set) var generation: UInt32 = 0
    /// The stream id nghttp2 assigned, or -1 before submission.
    var id: Int32 = -1
    /// nghttp2's error code (negative) for the last invalid frame the server sent on this stream,
    /// or 0. A code, not the message: the message is made only when the stream fails with it.
    var invalidFrameError: Int32 = 0
    /// ``deadlineSlot`` and ``tableSlot``, stored narrow (a slot is below the number of streams
    /// in flight).
    private var storedDeadlineSlot: Int32 = -1
    private var storedTableSlot: Int32 = -1
    /// Where the answer goes; set by the calling task before the stream is submitted.
    var completion: Completion?
    /// How much of the request body nghttp2 has taken.
    var bodyOffset = 0

    // The response being assembled. The three arrays skip the run-time exclusivity checks (one
    // per received field, two per DATA chunk, three per answer): only the thread holding the
    // session touches them, and each access is one append, swap or reset of the array, which runs no code able
    // to reach the stream again (their elements are strings and bytes).
    /// The response's `:status`, or 0 before it (or when it was not three digits).
    var status: Int {
        get { Int(storedStatus) }
        set { storedStatus = Int16(newValue) }
    }
    /// The size of the header block being received so far (name + value + 32 per field).
    var headerBlockSize = 0
    /// How many of the fields of the block being received repeat the connection's last block of
    /// the same kind (see ``RepeatedHeaderBlocks``), or -1 once one differed. Unchecked at run
    /// time, as `headers`, `trailers` and `body` are and for their reason: the I/O thread
    /// alone passes it `inout`, once per received field or block.
    @exclusivity(unchecked) var repeatedFields = 0
    /// How many 1xx header blocks the server sent.
    var informationalBlocks: Int {
        get { Int(storedInformationalBlocks) }
        set { storedInformationalBlocks = Int16(newValue) }
    }
    /// The final header block's fields.
    @exclusivity(unchecked) var headers: [HTTP2HeaderField] = []
    /// The trailing block's fields.
    @exclusivity(unchecked) var trailers: [HTTP2HeaderField] = []
    @exclusivity(unchecked) var body: [UInt8] = []

    /// Where the stream sits in the connection's deadline queue, or -1 when it is not queued.
    var deadlineSlot: Int {
        get { Int(storedDeadlineSlot) }
        set { storedDeadlineSlot = Int32(newValue) }
    }
    /// Where the stream sits in the connection's table of submitted streams, or -1 when it is
    /// not there.
    var tableSlot: Int {
        get { Int(storedTableSlot) }
        set { storedTableSlot = Int32(newValue) }
    }

    init(request: HTTP2Request) {
        self.request = request
        takeResponseBuffer()
    }

    /// The response body starts in the buffer the request brought, moved (not copied, so the
    /// body's first append writes into it in place).
    private func takeResponseBuffer() {
        swap(&body, &request.responseBuffer)
    }

    /// Request body and response bytes this stream holds.
    var retainedBytes: Int {
        func size(_ fields: [HTTP2HeaderField]) -> Int {
            fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count }
        }
        return request.body.count + body.count + size(headers) + size(trailers)
    }

    /// The caller has been answered.
    var isFinished: Bool { completion == nil }

    /// Answers the caller once; later calls do nothing. What the response gathered is let go
    /// here: a finished stream the connection still tracks (until nghttp2 closes it) holds nothing.
    func finish(_ result: Result<HTTP2Response, TransportFailure>) {
        guard completion != nil else { return }
        headers = []
        trailers = []
        body = []
        answer(result)
    }

    /// Answers the caller with the assembled response, which is moved out of the stream (each
    /// part in one access, not a copy and then a release).
    func finishWithResponse() {
        guard completion != nil else { return }
        let response = HTTP2Response(
            status: status,
            headers: Self.take(&headers),
            body: Self.take(&body),
            trailers: Self.take(&trailers),
            endedWithHeaders: endedWithHeaders
        )
        answer(.success(response))
    }

    /// Resumes the caller, once; the response's parts are already let go.
    private func answer(_ result: Result<HTTP2Response, TransportFailure>) {
        guard let completion else { return }
        self.completion = nil
        ThreadSanitizerHandoff.publish(self)
        completion.resume(returning: (result, sawFinalHeaders))
    }

    private static func take<Element>(_ array: inout [Element]) -> [Element] {
        var taken: [Element] = []
        swap(&taken, &array)
        return taken
    }

    /// The request's header fields, moved out to be submitted (nghttp2 copies what it keeps), so
    /// the stream holds none of them while the call waits; one access to the request, and no
    /// copy of its strings.
    func takeHeader() -> (head: HTTP2RequestHead?, block: HTTP2HeaderBlock) {
        Self.takeHeader(of: &request)
    }

    private static func takeHeader(of request: inout HTTP2Request) -> (head: HTTP2RequestHead?, block: HTTP2HeaderBlock)
    {
        var head: HTTP2RequestHead?
        swap(&head, &request.head)
        var block = HTTP2HeaderBlock()
        swap(&block, &request.headerBlock)
        return (head, block)
    }

    /// nghttp2 has taken the whole request body and will not ask for it again.
    func requestBodySent() {
        request.body = []
    }

    /// The calling task's exchange on a stream taken from the spare ones.
    func carry(_ request: consuming HTTP2Request) {
        self.request = request
        takeResponseBuffer()
    }

    /// Readies an ended stream for another exchange (on the I/O thread, before it is left in the
    /// inbox as a spare): nothing of the last exchange stays, and its generation moves on. Only a
    /// finished stream is reused, and finishing let go of its headers, trailers and body.
    func resetForReuse() {
        assert(isFinished && headers.isEmpty && trailers.isEmpty && body.isEmpty, "reused before it let go")
        request = HTTP2Request(headerBlock: HTTP2HeaderBlock(), body: [])
        generation &+= 1
        pendingReset = false
        completion = nil
        id = -1
        bodyOffset = 0
        deadlineSlot = -1
        tableSlot = -1
        cancelledBeforeSubmit = false
        headersSent = false
        remoteEnded = false
        invalidFrameError = 0
        resetByServer = false
        status = 0
        sawFinalHeaders = false
        inInformationalBlock = false
        headerBlockSize = 0
        repeatedFields = 0
        informationalBlocks = 0
        endedWithHeaders = false
    }

    /// A header block of the response ended (END_HEADERS; `endsStream` when it also ended the
    /// stream): a 1xx block is skipped whole, the final response comes in the next block. The
    /// block's fields are settled against the connection's last blocks (`blocks`), unless the
    /// caller has already been answered.
    func headerBlockEnded(endsStream: Bool, repeating blocks: inout RepeatedHeaderBlocks) {
        headerBlockSize = 0
        if inInformationalBlock {
            inInformationalBlock = false
            status = 0
            return
        }
        if !sawFinalHeaders {
            if !isFinished { blocks.end(&headers, repeated: &repeatedFields, kind: .headers) }
            sawFinalHeaders = true
            endedWithHeaders = endsStream
        } else if !isFinished {
            blocks.end(&trailers, repeated: &repeatedFields, kind: .trailers)
        }
        if endsStream { remoteEnded = true }
    }

    /// A received header field of the final block or of the trailers, compared with the
    /// connection's last block of the same kind (`blocks`).
    func appendField(
        name: UnsafeBufferPointer<UInt8>,
        value: UnsafeBufferPointer<UInt8>,
        repeating blocks: inout RepeatedHeaderBlocks
    ) {
        if sawFinalHeaders {
            blocks.append(name: name, value: value, to: &trailers, repeated: &repeatedFields, kind: .trailers)
        } else {
            blocks.append(name: name, value: value, to: &headers, repeated: &repeatedFields, kind: .headers)
        }
    }
}
