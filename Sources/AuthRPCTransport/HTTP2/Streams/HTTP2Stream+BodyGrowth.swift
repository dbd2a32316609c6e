extension HTTP2Stream {
    /// How far ahead of the bytes received the body may grow to the size its prefix declares.
    static let bodyGrowthAhead = 4

    /// Appends a DATA chunk to the response body.
    ///
    /// An array doubles when full, so a 3 MiB message would be copied at every doubling on the
    /// way and end in a 4 MiB buffer. A unary gRPC body is one message whose 5-byte prefix
    /// declares its length, so once a quarter of it has arrived the body grows straight to that
    /// size and is not copied again. The growth is never more than ``bodyGrowthAhead`` times the
    /// bytes received (doubling's is two): a server that declares a large message and stops
    /// makes the client reserve at most four times what it sent. A prefix that does not fit
    /// what arrives (a second message, a length past the limit) changes nothing: the array
    /// doubles as usual and the response's decoder says what was wrong.
    func appendBody(_ bytes: UnsafeRawBufferPointer) {
        let needed = body.count + bytes.count
        if needed > body.capacity, let declared = declaredBodyBytes,
            declared >= needed, declared <= needed * Self.bodyGrowthAhead,
            declared <= request.maxResponseBodyBytes
        {
            body.reserveCapacity(declared)
        }
        body.append(contentsOf: bytes)
    }

    /// The whole body's length by its message prefix, once the prefix has arrived.
    private var declaredBodyBytes: Int? {
        guard body.count >= GRPCMessagePrefix.byteCount else { return nil }
        return GRPCMessagePrefix.byteCount + GRPCMessagePrefix.payloadLength(body)
    }
}
