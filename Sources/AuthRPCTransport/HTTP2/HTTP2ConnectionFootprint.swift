/// What a connection's I/O thread still holds on to, so tests can check that a finished exchange
/// leaves nothing behind on the connection; and how many response bytes it read straight into
/// their bodies and how many it let bodies reserve ahead of their bytes, so they can check that a
/// large response was not copied on its way in and that a server's word reserved no more than
/// allowed.
package struct HTTP2ConnectionFootprint: Sendable, Equatable, CustomStringConvertible {
    /// Streams in the I/O thread's table (running, or finished but not yet closed by nghttp2).
    package var streams: Int
    /// Entries in the deadline queue.
    package var deadlines: Int
    /// Request body and response bytes still held by the streams in either.
    package var retainedBytes: Int
    /// DATA bytes read straight into response bodies since the connection began
    /// (ConnectionLoop+BodyInPlace).
    package var bytesReadInPlace: Int
    /// Bytes the open streams' bodies hold reserved to their declared size ahead of what arrived
    /// (BodyReservations).
    package var bytesReservedAhead: Int

    package init(
        streams: Int,
        deadlines: Int,
        retainedBytes: Int,
        bytesReadInPlace: Int = 0,
        bytesReservedAhead: Int = 0
    ) {
        self.streams = streams
        self.deadlines = deadlines
        self.retainedBytes = retainedBytes
        self.bytesReadInPlace = bytesReadInPlace
        self.bytesReservedAhead = bytesReservedAhead
    }

    /// A connection that has ended holds nothing.
    static let empty = HTTP2ConnectionFootprint(streams: 0, deadlines: 0, retainedBytes: 0)

    package var description: String {
        "\(streams) streams, \(deadlines) deadline entries, \(retainedBytes) bytes retained, "
            + "\(bytesReadInPlace) bytes read in place, \(bytesReservedAhead) bytes reserved ahead"
    }
}
