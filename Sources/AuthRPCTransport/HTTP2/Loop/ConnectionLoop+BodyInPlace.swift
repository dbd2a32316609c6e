internal import CNGHTTP2

/// A large response's DATA read straight into its body.
///
/// A DATA chunk nghttp2 hands over is only valid inside its callback, so it is copied from the
/// read buffer into the body: for a 4 MiB response, 4 MiB copied on top of the kernel's copy and
/// the decoder's. When the frame being received is a unary stream's DATA with at least
/// ``inPlaceMinimum`` bytes of payload still to come, the next read goes into the body's free
/// capacity instead, for no more than that payload, and nghttp2 is fed from there. Its chunk then
/// points at the bytes already in place (``claimPlaced(_:of:)``), and nothing is copied. Bytes
/// nghttp2 does not hand over as that stream's DATA (it ignores the DATA of a stream it reset)
/// are taken out of the body again after the feed, so the body only ever holds what nghttp2
/// delivered, in order.
///
/// The server's frames are at most ``HTTP2ConnectionConfiguration/maxFrameSize`` (256 KiB), so
/// a 4 MiB message comes in 16 frames, not 256. Reads are kept in step with the frames: after a
/// large DATA frame's header, and after a read in place, the next read is short
/// (``inPlaceMinimum``). It brings the next frame's header, or the last bytes of a frame the body
/// had no more room for, with little of the payload, which then goes in place.
extension ConnectionLoop {
    /// The smallest read worth making in place, and the length of the read after one.
    static let inPlaceMinimum = 16 << 10

    /// The unary stream whose DATA payload the next read may go straight into, and how much of
    /// it.
    func inPlaceTarget() -> (stream: HTTP2Stream, room: Int)? {
        guard #available(macOS 26, *) else { return nil }
        guard dataFrame.left >= Self.inPlaceMinimum, let session,
            let userData = nghttp2_session_get_stream_user_data(session, dataFrame.streamID)
        else { return nil }
        // Borrowed: the loop's table owns a unary stream while nghttp2 keeps its user data.
        return Unmanaged<HTTP2Stream>.fromOpaque(userData)._withUnsafeGuaranteedRef { stream in
            guard !stream.isFinished else { return nil }
            let room = stream.roomInPlace(
                frameLeft: dataFrame.left,
                minimum: Self.inPlaceMinimum,
                reservations: &bodyReservations
            )
            return room > 0 ? (stream, room) : nil
        }
    }

    /// Reads with `read` into `stream`'s body (at most `room` bytes) and returns its outcome;
    /// `count` says how many bytes an outcome brought.
    @available(macOS 26, *)
    func readInPlace<Outcome>(
        into stream: HTTP2Stream,
        room: Int,
        _ read: (UnsafeMutableRawBufferPointer) -> Outcome,
        count: (Outcome) -> Int?
    ) -> Outcome {
        var outcome: Outcome?
        stream.receiveInPlace(count: room) { target in
            let result = read(target)
            outcome = result
            return count(result) ?? 0
        }
        return outcome!
    }

    /// Feeds nghttp2 the last `count` bytes of `stream`'s body, just read there, then takes out
    /// of the body those it did not hand over as the stream's DATA. Returns the error that ends
    /// the connection, if any, and whether the stream still receives: not when it finished, nor
    /// when nghttp2 closed it during the feed (it may then already carry another exchange, on
    /// another thread, and is not touched again).
    func feedPlaced(_ count: Int, of stream: HTTP2Stream) -> (failure: TransportFailure?, receiving: Bool) {
        let fed = feedPlaced(count, from: stream.body, of: stream)
        bytesReadInPlace += count - fed.unclaimed
        guard !fed.recycled, !stream.isFinished else { return (fed.failure, false) }
        if fed.unclaimed > 0 { stream.withdrawPlaced(fed.unclaimed) }
        return (fed.failure, true)
    }

    /// `body` is a second reference to the stream's storage for the length of the feed: the bytes
    /// nghttp2 reads stay where they are whatever its callbacks do with the stream. It is let go
    /// when this returns, before the caller takes unclaimed bytes out (which, with two
    /// references, would copy the body).
    private func feedPlaced(
        _ count: Int,
        from body: [UInt8],
        of stream: HTTP2Stream
    ) -> (failure: TransportFailure?, unclaimed: Int, recycled: Bool) {
        body.withUnsafeBytes { all in
            let placed = UnsafeRawBufferPointer(rebasing: all[(all.count - count)...])
            placement = BodyPlacement(stream: ObjectIdentifier(stream), next: placed.baseAddress, unclaimed: count)
            defer { placement = nil }
            let failure = feed(placed)
            return (failure, placement?.unclaimed ?? 0, placement?.streamRecycled ?? false)
        }
    }

    /// Whether `bytes`, a DATA chunk for `stream`, are the bytes just read into its body (they
    /// are then its already, and the chunk is not appended).
    func claimPlaced(_ bytes: UnsafeRawBufferPointer, of stream: HTTP2Stream) -> Bool {
        guard let current = placement, current.stream == ObjectIdentifier(stream),
            bytes.baseAddress == current.next, bytes.count <= current.unclaimed
        else { return false }
        placement?.next = current.next.map { $0 + bytes.count }
        placement?.unclaimed = current.unclaimed - bytes.count
        return true
    }

    /// A frame's header arrived: remember a DATA frame's stream and payload length (not a padded
    /// one's, whose payload starts with its padding length). For a unary stream's large frame,
    /// the next read is short, so that it ends inside the frame and the rest can go in place
    /// (a read of the whole read buffer would take one frame after another the copying way).
    func didBeginFrame(type: UInt8, flags: UInt8, streamID: Int32, length: Int) {
        let unpaddedData =
            type == UInt8(NGHTTP2_DATA.rawValue) && flags & UInt8(NGHTTP2_FLAG_PADDED.rawValue) == 0
        dataFrame = DataFrameInProgress(streamID: streamID, left: unpaddedData ? length : 0)
        if unpaddedData, length >= 2 * Self.inPlaceMinimum, let session,
            nghttp2_session_get_stream_user_data(session, streamID) != nil
        {
            shortReadNext = true
        }
    }
}

/// The DATA frame being received: its stream and how many payload bytes are still to come
/// (0 for any other frame).
struct DataFrameInProgress {
    var streamID: Int32 = 0
    var left = 0
}

/// Bytes read into a stream's body that nghttp2 is being fed: where the next chunk it hands over
/// must start to be theirs, how many it has not handed over yet, and whether the stream was left
/// as a spare during the feed.
struct BodyPlacement {
    var stream: ObjectIdentifier
    var next: UnsafeRawPointer?
    var unclaimed: Int
    var streamRecycled = false
}
