internal import CNGHTTP2

/// The C callbacks nghttp2 calls from inside `mem_recv`/`mem_send`, on the I/O thread.
///
/// Each one finds its `ConnectionLoop` through the session's user data (a unary stream through
/// the stream's) and records what happened; none calls back into nghttp2. Both are borrowed, not
/// retained, for the length of a callback (see `withLoop`).
enum SessionCallbacks {
    static func install(on callbacks: OpaquePointer?) {
        nghttp2_session_callbacks_set_on_header_callback(callbacks, onHeader)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, onFrameReceived)
        nghttp2_session_callbacks_set_on_begin_frame_callback(callbacks, onBeginFrame)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, onDataChunk)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, onStreamClose)
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, onFrameSent)
        nghttp2_session_callbacks_set_on_frame_not_send_callback(callbacks, onFrameNotSent)
        nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(callbacks, onInvalidFrame)
    }

    /// Calls `body` with the loop, borrowed: the loop owns the session and deletes it before it
    /// goes, so it outlives every callback, and a borrowed reference costs no retain and release
    /// (atomic, on every callback of every call).
    private static func withLoop<Result>(
        _ userData: UnsafeMutableRawPointer?,
        _ body: (ConnectionLoop) -> Result
    ) -> Result {
        Unmanaged<ConnectionLoop>.fromOpaque(userData!)._withUnsafeGuaranteedRef(body)
    }

    /// The unary stream with this id, from the user data nghttp2 keeps for it (a bidirectional
    /// stream has none): nghttp2's own lookup, without hashing the id again or reading the loop's
    /// table. Sound because the loop's table owns every submitted unary stream for as long as
    /// nghttp2 may call back about it: until its close callback, until its HEADERS are dropped
    /// (the loop clears the user data then), or until the session is deleted.
    private static func unaryStream(_ session: OpaquePointer?, _ id: Int32) -> Unmanaged<HTTP2Stream>? {
        guard let userData = nghttp2_session_get_stream_user_data(session, id) else { return nil }
        return Unmanaged<HTTP2Stream>.fromOpaque(userData)
    }

    /// Copies the next part of a request body into nghttp2's frame buffer.
    static let readRequestBody: nghttp2_data_source_read_callback = { _, _, buffer, length, flags, source, _ in
        // Borrowed: the loop's table owns a stream while nghttp2 sends its body.
        Unmanaged<HTTP2Stream>.fromOpaque(source!.pointee.ptr)._withUnsafeGuaranteedRef { stream in
            copyRequestBody(of: stream, into: buffer!, length: length, flags: flags!)
        }
    }

    private static func copyRequestBody(
        of stream: HTTP2Stream,
        into buffer: UnsafeMutablePointer<UInt8>,
        length: Int,
        flags: UnsafeMutablePointer<UInt32>
    ) -> Int {
        let count = stream.request.body.withUnsafeBytes { body -> Int in
            let count = min(length, body.count - stream.bodyOffset)
            if count > 0 {
                buffer.update(
                    from: body.baseAddress!.assumingMemoryBound(to: UInt8.self) + stream.bodyOffset,
                    count: count
                )
            }
            return count
        }
        stream.bodyOffset += count
        if stream.bodyOffset == stream.request.body.count {
            flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
            stream.requestBodySent()
        }
        return count
    }

    /// Returned from the header callback to stop a block: nghttp2 decodes the rest without
    /// calling back (keeping HPACK in step) and resets the stream with INTERNAL_ERROR.
    private static let stopHeaderBlock = NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue

    private static let onHeader: nghttp2_on_header_callback = {
        session,
        frame,
        name,
        nameLength,
        value,
        valueLength,
        _,
        userData in
        guard let frame, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) else { return 0 }
        let nameBytes = UnsafeBufferPointer(start: name, count: nameLength)
        let valueBytes = UnsafeBufferPointer(start: value, count: valueLength)
        return withLoop(userData) { loop in
            // Unary streams first, in this callback and the others: they are the hot path, and a
            // bidirectional stream is looked up only when the id is not a unary one.
            guard let stream = unaryStream(session, frame.pointee.hd.stream_id) else {
                guard let call = loop.streamingCall(frame.pointee.hd.stream_id) else { return 0 }
                return loop.streamingHeader(call, name: nameBytes, value: valueBytes) ? 0 : stopHeaderBlock
            }
            // Borrowed: failing the stream answers its caller but leaves it in the loop's table.
            return stream._withUnsafeGuaranteedRef { receivedHeader(name: nameBytes, value: valueBytes, on: $0, loop) }
        }
    }

    /// A field of a unary stream's header block: kept, or the block stopped.
    private static func receivedHeader(
        name nameBytes: UnsafeBufferPointer<UInt8>,
        value valueBytes: UnsafeBufferPointer<UInt8>,
        on stream: HTTP2Stream,
        _ loop: ConnectionLoop
    ) -> Int32 {
        guard !stream.isFinished else { return 0 }
        // Every block counts, 1xx ones included, as RFC 9113 section 6.5.2 sizes a header list.
        stream.headerBlockSize += nameBytes.count + valueBytes.count + 32
        if stream.headerBlockSize > loop.maxHeaderListSize {
            loop.fail(stream, .responseHeaderListTooLarge(limit: loop.maxHeaderListSize))
            return stopHeaderBlock
        }
        if stream.sawFinalHeaders {
            // Pseudo-headers never belong in trailers; nghttp2 already rejects them.
            stream.appendField(name: nameBytes, value: valueBytes, repeating: &loop.repeatedBlocks)
            return 0
        }
        if stream.inInformationalBlock { return 0 }
        if nameBytes.first == UInt8(ascii: ":") {
            if nameBytes.equals(":status") {
                stream.status = valueBytes.httpStatus
                if (100..<200).contains(stream.status) {
                    stream.informationalBlocks += 1
                    if stream.informationalBlocks > ConnectionLoop.maxInformationalBlocks {
                        loop.fail(
                            stream,
                            .protocolError(
                                "the server sent more than \(ConnectionLoop.maxInformationalBlocks) informational (1xx) responses on one stream"
                            )
                        )
                        return stopHeaderBlock
                    }
                    stream.inInformationalBlock = true
                }
            }
            return 0
        }
        stream.appendField(name: nameBytes, value: valueBytes, repeating: &loop.repeatedBlocks)
        return 0
    }

    private static let onFrameReceived: nghttp2_on_frame_recv_callback = { session, frame, userData in
        guard let frame else { return 0 }
        withLoop(userData) { loop in receivedFrame(frame, session: session, loop) }
        return 0
    }

    private static func receivedFrame(
        _ frame: UnsafePointer<nghttp2_frame>,
        session: OpaquePointer?,
        _ loop: ConnectionLoop
    ) {
        let header = frame.pointee.hd
        let endsStream = header.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        switch Int(header.type) {
        case Int(NGHTTP2_HEADERS.rawValue):
            guard let stream = unaryStream(session, header.stream_id) else {
                if let call = loop.streamingCall(header.stream_id) {
                    loop.streamingHeadersEnded(call, endsStream: endsStream)
                }
                return
            }
            stream._withUnsafeGuaranteedRef {
                $0.headerBlockEnded(endsStream: endsStream, repeating: &loop.repeatedBlocks)
            }
        case Int(NGHTTP2_DATA.rawValue):
            guard endsStream else { return }
            if let stream = unaryStream(session, header.stream_id) {
                stream._withUnsafeGuaranteedRef { $0.remoteEnded = true }
            } else if let call = loop.streamingCall(header.stream_id) {
                loop.streamingDataEnded(call)
            }
        case Int(NGHTTP2_RST_STREAM.rawValue):
            if let stream = unaryStream(session, header.stream_id) {
                stream._withUnsafeGuaranteedRef { $0.resetByServer = true }
            } else {
                loop.streamingCall(header.stream_id)?.resetByServer = true
            }
        case Int(NGHTTP2_SETTINGS.rawValue):
            if header.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) == 0 { loop.didReceiveSettings() }
        case Int(NGHTTP2_PING.rawValue):
            if header.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) != 0 { loop.didReceivePingAck() }
        case Int(NGHTTP2_GOAWAY.rawValue):
            let goaway = frame.pointee.goaway
            let debug =
                goaway.opaque_data.map {
                    String(
                        decoding: UnsafeBufferPointer(start: $0, count: min(goaway.opaque_data_len, 256)),
                        as: UTF8.self
                    )
                } ?? ""
            loop.didReceiveGoaway(lastStreamID: goaway.last_stream_id, errorCode: goaway.error_code, debugData: debug)
        default:
            break
        }
    }

    private static let onDataChunk: nghttp2_on_data_chunk_recv_callback = {
        session,
        _,
        streamID,
        data,
        length,
        userData in
        let bytes = UnsafeRawBufferPointer(start: data, count: length)
        withLoop(userData) { loop in
            if streamID == loop.dataFrame.streamID { loop.dataFrame.left -= length }
            if let stream = unaryStream(session, streamID) {
                // A unary response is read whole: its window is given back as it arrives.
                nghttp2_session_consume(session, streamID, length)
                stream._withUnsafeGuaranteedRef { loop.didReceiveData(bytes, for: $0) }
            } else if let call = loop.streamingCall(streamID) {
                loop.streamingData(call, bytes)
            } else {
                // A stream the loop no longer tracks: its bytes still count against the connection.
                nghttp2_session_consume(session, streamID, length)
            }
        }
        return 0
    }

    /// A frame's header arrived (once for a header block, not for each CONTINUATION): the loop
    /// keeps a DATA frame's payload length, for reading it in place (ConnectionLoop+BodyInPlace).
    private static let onBeginFrame: nghttp2_on_begin_frame_callback = { _, header, userData in
        let header = header!.pointee
        withLoop(userData) { loop in
            loop.didBeginFrame(
                type: header.type,
                flags: header.flags,
                streamID: header.stream_id,
                length: header.length
            )
        }
        return 0
    }

    private static let onStreamClose: nghttp2_on_stream_close_callback = { session, streamID, errorCode, userData in
        withLoop(userData) { loop in
            // Taken, not borrowed: the loop lets go of the stream here.
            if let stream = unaryStream(session, streamID)?.takeUnretainedValue() {
                loop.streamDidClose(stream, errorCode: errorCode)
            } else if let call = loop.streamingCall(streamID) {
                loop.streamingDidClose(call, errorCode: errorCode)
            }
        }
        return 0
    }

    private static let onFrameSent: nghttp2_on_frame_send_callback = { session, frame, userData in
        guard let frame else { return 0 }
        switch frame.pointee.hd.type {
        case UInt8(NGHTTP2_HEADERS.rawValue):
            unaryStream(session, frame.pointee.hd.stream_id)?._withUnsafeGuaranteedRef { $0.headersSent = true }
        case UInt8(NGHTTP2_GOAWAY.rawValue):
            // nghttp2 sends GOAWAY with an error when the server broke the protocol; its debug
            // data says how.
            let goaway = frame.pointee.goaway
            guard goaway.error_code != NGHTTP2_NO_ERROR.rawValue else { return 0 }
            let reason =
                goaway.opaque_data.map {
                    String(
                        decoding: UnsafeBufferPointer(start: $0, count: min(goaway.opaque_data_len, 256)),
                        as: UTF8.self
                    )
                } ?? ""
            withLoop(userData) { $0.didSendGoaway(errorCode: goaway.error_code, reason: reason) }
        default:
            break
        }
        return 0
    }

    private static let onFrameNotSent: nghttp2_on_frame_not_send_callback = { session, frame, errorCode, userData in
        guard let frame, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) else { return 0 }
        withLoop(userData) { loop in
            // Taken, not borrowed: the loop lets go of the stream here.
            if let stream = unaryStream(session, frame.pointee.hd.stream_id)?.takeUnretainedValue() {
                loop.headersNotSent(for: stream, reason: errorCode)
            } else if let call = loop.streamingCall(frame.pointee.hd.stream_id) {
                loop.streamingHeadersNotSent(call, reason: errorCode)
            }
        }
        return 0
    }

    private static let onInvalidFrame: nghttp2_on_invalid_frame_recv_callback = { session, frame, errorCode, userData in
        guard let frame else { return 0 }
        if let stream = unaryStream(session, frame.pointee.hd.stream_id) {
            stream._withUnsafeGuaranteedRef { $0.invalidFrameError = errorCode }
        } else {
            withLoop(userData) {
                $0.streamingCall(frame.pointee.hd.stream_id)?.protocolViolation = invalidFrameViolation(errorCode)
            }
        }
        return 0
    }

    /// What a stream fails with after the server sent it an invalid frame (nghttp2's `errorCode`).
    static func invalidFrameViolation(_ errorCode: Int32) -> String {
        "the server sent an invalid frame: \(String(cString: nghttp2_strerror(errorCode)))"
    }
}
