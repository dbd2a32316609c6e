extension HTTP2Stream {
    /// How far ahead of the bytes received the body may grow to the size its prefix declares.
    static let bodyGrowthAhead = 4

    /// Appends a DATA chunk to the response body.
    ///
    /// An array doubles when full, so a 3 MiB message would be copied at every doubling on the
    /// way and end in a 4 MiB buffer. A unary gRPC body is one message whose 5-byte prefix
    /// declares its length, so the body grows straight to that size and is not copied again:
    /// from the first chunk when the connection grants it (``BodyReservations``, which bounds
    /// what a server's word can make it reserve), else once a quarter of it has arrived. Without
    /// a grant the growth is never more than ``bodyGrowthAhead`` times the bytes received
    /// (doubling's is two): a server that declares large messages and stops makes the client
    /// reserve at most the connection's allowance plus four times what it sent. A prefix that
    /// does not fit what arrives (a second message, a length past the limit) changes nothing: the
    /// array doubles as usual and the response's decoder says what was wrong.
    ///
    /// `spare` is the connection's kept body (ConnectionLoop+SpareBody): when the declared size
    /// fits it, and it is not more than twice that size, the body takes it over from the first
    /// chunk on, reserving nothing new. (Should a caller still hold the spare's bytes, the array
    /// copies on write: a new buffer of the spare's size, and the caller's bytes stay as they are.)
    func appendBody(_ bytes: UnsafeRawBufferPointer, spare: inout [UInt8], reservations: inout BodyReservations) {
        let needed = body.count + bytes.count
        if needed > body.capacity, let declared = declaredBodyBytes(appending: bytes), declared >= needed,
            declared <= request.maxResponseBodyBytes
        {
            if declared <= spare.capacity, spare.capacity <= 2 * declared {
                takeOver(&spare)
            } else if mayGrow(to: declared, received: needed, reservations: &reservations) {
                body.reserveCapacity(declared)
            }
        }
        body.append(contentsOf: bytes)
    }

    /// Whether the body may grow to `declared` bytes now, with `received` of them here: within
    /// ``bodyGrowthAhead`` times those, or as far as the connection grants (``BodyReservations``).
    func mayGrow(to declared: Int, received: Int, reservations: inout BodyReservations) -> Bool {
        declared <= received * Self.bodyGrowthAhead || reservations.reserve(declared, for: id)
    }

    /// The body continues in `spare`'s storage, and `spare` is left empty.
    private func takeOver(_ spare: inout [UInt8]) {
        var taken: [UInt8] = []
        swap(&taken, &spare)
        taken.removeAll(keepingCapacity: true)
        taken.append(contentsOf: body)
        body = taken
    }

    /// The whole body's length by its message prefix, once the prefix is in the body or, for the
    /// first chunk, in `bytes`.
    private func declaredBodyBytes(appending bytes: UnsafeRawBufferPointer) -> Int? {
        if body.count >= GRPCMessagePrefix.byteCount {
            return GRPCMessagePrefix.byteCount + GRPCMessagePrefix.payloadLength(body)
        }
        guard body.isEmpty, bytes.count >= GRPCMessagePrefix.byteCount else { return nil }
        return GRPCMessagePrefix.byteCount + GRPCMessagePrefix.payloadLength(bytes)
    }
}
