internal import AuthRPCSystem
internal import CNGHTTP2

/// The I/O thread's side of bidirectional streams: opening them, feeding nghttp2 what their
/// callers send, handing their readers what the server sends, and flow control between the two.
///
/// The connection's session gives no window back by itself (no automatic WINDOW_UPDATE): a unary
/// stream's DATA is consumed as it arrives (SessionCallbacks), a bidirectional stream's at the
/// connection level as it arrives and at the stream level only once its reader takes the message.
extension ConnectionLoop {
    /// The bidirectional stream with this id, if any. Asked by every session callback before the
    /// unary path: a connection with none open (every connection of a unary channel) reads a
    /// count, not the table.
    func streamingCall(_ id: Int32) -> StreamingCall? {
        streamingCallsOpen == 0 ? nil : streamingCalls[id]
    }

    func handle(_ command: StreamingCommand) {
        switch command {
        case .open(let call):
            open(call)
        case .resume(let call):
            if let session, streamingCalls[call.id] === call {
                nghttp2_session_resume_data(session, call.id)
            }
        case .consumed(let call, let count):
            if let session, streamingCalls[call.id] === call, !call.remoteEnded {
                nghttp2_session_consume_stream(session, call.id, count)
            }
        case .cancel(let call):
            guard !call.isFinished else { return }
            resetStreaming(call, code: HTTP2ErrorCode.cancel, failing: .cancelled)
        }
    }

    /// Fails a command that never reached a session: the connection had ended.
    static func refuse(_ command: StreamingCommand, with error: TransportFailure) {
        if case .open(let call) = command { call.finish(.failure(notSent(error))) }
    }

    private func open(_ call: StreamingCall) {
        guard let session, closeReason == nil else {
            call.finish(
                .failure(Self.notSent(closeReason ?? .connectionClosed(reason: "closed", streamWasSent: false)))
            )
            return
        }
        if let goawayError {
            call.finish(.failure(goawayError))
            return
        }
        var provider = nghttp2_data_provider()
        provider.source.ptr = Unmanaged.passUnretained(call).toOpaque()
        provider.read_callback = Self.readStreamingBody
        let id: Int32
        switch submitRequestHeaders(call.headerBlock, provider: &provider, session: session) {
        case .success(let submitted):
            id = submitted
        case .failure(let failure):
            call.finish(.failure(failure))
            return
        }
        guard id > 0 else {
            call.finish(.failure(.protocolError(String(cString: nghttp2_strerror(id)))))
            return
        }
        call.id = id
        call.headerBlock = HTTP2HeaderBlock()
        streamingCalls[id] = call
        streamingCallsOpen += 1
    }

    /// Copies what the caller has sent into nghttp2's frame; "nothing yet" defers the stream
    /// until the caller's next send resumes it.
    static let readStreamingBody: nghttp2_data_source_read_callback = { _, _, buffer, length, flags, source, _ in
        let call = Unmanaged<StreamingCall>.fromOpaque(source!.pointee.ptr).takeUnretainedValue()
        let (count, ended) = call.mailbox.withLock { box -> (Int, Bool?) in
            let count = box.takeUnsent(into: buffer!, count: length)
            guard box.unsentCount == 0 else { return (count, false) }
            if box.endRequested { return (count, true) }
            if count > 0 { return (count, false) }
            box.deferred = true
            return (0, nil)
        }
        guard let ended else { return Int(NGHTTP2_ERR_DEFERRED.rawValue) }
        if ended {
            flags!.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
            call.localEnded = true
        }
        return count
    }

    /// Resets a running stream and tells its reader `error`.
    func resetStreaming(_ call: StreamingCall, code: UInt32, failing error: TransportFailure) {
        if let session, call.id > 0 {
            nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), call.id, code)
        }
        call.finish(.failure(error))
    }

    // MARK: - From the nghttp2 callbacks

    /// One field of a response header block; returns false to stop the block (the stream has
    /// failed).
    func streamingHeader(
        _ call: StreamingCall,
        name: UnsafeBufferPointer<UInt8>,
        value: UnsafeBufferPointer<UInt8>
    ) -> Bool {
        guard !call.isFinished else { return true }
        call.headerBlockSize += name.count + value.count + 32
        if call.headerBlockSize > maxHeaderListSize {
            resetStreaming(
                call,
                code: HTTP2ErrorCode.cancel,
                failing: .responseHeaderListTooLarge(limit: maxHeaderListSize)
            )
            return false
        }
        if call.inInformationalBlock { return true }
        if !call.sawFinalHeaders, name.first == UInt8(ascii: ":") {
            if name.equals(":status") {
                call.status = value.httpStatus
                if (100..<200).contains(call.status) {
                    call.informationalBlocks += 1
                    guard call.informationalBlocks <= Self.maxInformationalBlocks else {
                        resetStreaming(
                            call,
                            code: HTTP2ErrorCode.cancel,
                            failing: .protocolError(
                                "the server sent more than \(Self.maxInformationalBlocks) informational (1xx) responses on one stream"
                            )
                        )
                        return false
                    }
                    call.inInformationalBlock = true
                }
            }
            return true
        }
        call.fields.append(
            HTTP2HeaderField(name: ReceivedHeaderText.string(name), value: ReceivedHeaderText.string(value))
        )
        return true
    }

    /// A complete response header block.
    func streamingHeadersEnded(_ call: StreamingCall, endsStream: Bool) {
        call.headerBlockSize = 0
        if call.inInformationalBlock {
            call.inInformationalBlock = false
            call.status = 0
            return
        }
        if endsStream { call.remoteEnded = true }
        guard !call.isFinished else { return }
        let fields = call.fields
        call.fields = []
        if !call.sawFinalHeaders {
            call.sawFinalHeaders = true
            if endsStream {
                // Trailers-only: the fields are the trailers.
                _ = call.deliver(.headers(status: call.status, fields: []))
                remoteEnded(call, trailers: fields)
            } else {
                _ = call.deliver(.headers(status: call.status, fields: fields))
            }
        } else {
            remoteEnded(call, trailers: fields)
        }
    }

    /// A DATA frame with END_STREAM: the server ended without trailers.
    func streamingDataEnded(_ call: StreamingCall) {
        call.remoteEnded = true
        guard !call.isFinished else { return }
        remoteEnded(call, trailers: [])
    }

    /// The server ended its side: its last event, then the end; the caller's side, if still
    /// open, is reset (NO_ERROR), since nothing it sends would be read.
    private func remoteEnded(_ call: StreamingCall, trailers: [HTTP2HeaderField]) {
        if call.deframer.holdsPartialMessage {
            resetStreaming(
                call,
                code: HTTP2ErrorCode.cancel,
                failing: .protocolError("the server ended the stream in the middle of a message")
            )
            return
        }
        _ = call.deliver(.trailers(trailers))
        if !call.localEnded, let session {
            nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), call.id, HTTP2ErrorCode.noError)
        }
        call.finish(.success(()))
    }

    /// DATA bytes for `call`: the connection's window gets them back at once; the stream's only
    /// as the reader takes the messages they make.
    func streamingData(_ call: StreamingCall, _ bytes: UnsafeRawBufferPointer) {
        guard let session else { return }
        nghttp2_session_consume_connection(session, bytes.count)
        guard !call.isFinished else { return }
        do throws(MessageDeframer.Failure) {
            try call.deframer.feed(bytes) { message throws(MessageDeframer.Failure) in
                guard call.deliver(.message(message)) else { throw .tooMany }
            }
        } catch {
            let failure: TransportFailure
            switch error {
            case .tooLarge(let limit):
                failure = .responseBodyTooLarge(limit: limit)
            case .compressed:
                failure = .protocolError("the server sent a compressed message, and no compression was offered")
            case .badFlag(let flag):
                failure = .protocolError("the server sent a message with an invalid flag byte \(flag)")
            case .tooMany:
                failure = .protocolError(
                    "the server sent more than \(call.limits.maxQueuedMessages) messages that were not read"
                )
            }
            resetStreaming(call, code: HTTP2ErrorCode.cancel, failing: failure)
        }
    }

    /// nghttp2 closed the stream: let go of it, and tell its reader why if nothing has.
    func streamingDidClose(_ call: StreamingCall, errorCode: UInt32) {
        if streamingCalls.removeValue(forKey: call.id) != nil { streamingCallsOpen -= 1 }
        guard !call.isFinished else { return }
        if let violation = call.protocolViolation {
            call.finish(.failure(.protocolError(violation)))
        } else if call.resetByServer, errorCode == HTTP2ErrorCode.refusedStream {
            call.finish(.failure(.connectionClosed(reason: "the server refused the stream", streamWasSent: false)))
        } else if call.resetByServer {
            call.finish(.failure(.streamReset(errorCode: errorCode)))
        } else if let goawayError {
            call.finish(.failure(goawayError))
        } else {
            call.finish(
                .failure(
                    .protocolError(
                        "the server's frames on this stream broke HTTP/2's rules; the client reset it with "
                            + HTTP2ErrorCode.name(errorCode)
                    )
                )
            )
        }
    }

    /// nghttp2 could not send the stream's HEADERS (the session is going away).
    func streamingHeadersNotSent(_ call: StreamingCall, reason: Int32) {
        if streamingCalls.removeValue(forKey: call.id) != nil { streamingCallsOpen -= 1 }
        call.finish(
            .failure(
                goawayError
                    ?? .connectionClosed(reason: String(cString: nghttp2_strerror(reason)), streamWasSent: false)
            )
        )
    }

    /// The connection ended: every open stream fails with `error`.
    func failStreamingCalls(_ error: TransportFailure) {
        for call in streamingCalls.values {
            call.finish(.failure(Self.failure(error, headersSent: true)))
        }
    }
}
