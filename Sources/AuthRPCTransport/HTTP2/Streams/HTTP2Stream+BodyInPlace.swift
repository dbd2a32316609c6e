extension HTTP2Stream {
    /// How many bytes of the DATA frame being received (`frameLeft` of its payload still to come)
    /// the body can take where they will stay, at least `minimum` or none.
    ///
    /// Only a body whose message prefix has arrived and declares a size within the call's limit
    /// is read into, and never past that size: what a server sends beyond it (a second message)
    /// goes through ``appendBody(_:spare:reservations:)``, whose decoder says what was wrong.
    /// When the free capacity is under `minimum`, the body grows as
    /// ``mayGrow(to:received:reservations:)`` lets it: to the declared size when `reservations`
    /// grants it, else never past ``bodyGrowthAhead`` times the bytes received, so a server that
    /// announces large frames and stops makes the client reserve no more than the connection's
    /// allowance plus four times what it sent.
    func roomInPlace(frameLeft: Int, minimum: Int, reservations: inout BodyReservations) -> Int {
        guard body.count >= GRPCMessagePrefix.byteCount else { return 0 }
        let declared = GRPCMessagePrefix.byteCount + GRPCMessagePrefix.payloadLength(body)
        guard declared <= request.maxResponseBodyBytes else { return 0 }
        let wanted = min(frameLeft, declared - body.count)
        guard wanted >= minimum else { return 0 }
        if body.capacity - body.count < minimum {
            let granted = mayGrow(to: declared, received: body.count, reservations: &reservations)
            body.reserveCapacity(granted ? declared : body.count * Self.bodyGrowthAhead)
        }
        let room = min(wanted, body.capacity - body.count)
        return room >= minimum ? room : 0
    }

    /// Appends what `read` writes at the start of the body's free capacity (at most `count`
    /// bytes; it returns how many it wrote). The bytes count as the body's at once; the
    /// connection takes back any that nghttp2 does not hand over as this stream's DATA
    /// (``withdrawPlaced(_:)``).
    @available(macOS 26, *)
    func receiveInPlace(count: Int, _ read: (UnsafeMutableRawBufferPointer) -> Int) {
        body.append(addingCapacity: count) { span in
            span.withUnsafeMutableBufferPointer { free, initialized in
                initialized = read(UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: free[..<count])))
            }
        }
    }

    /// Removes the last `count` bytes, read in place but not handed over as this stream's DATA.
    func withdrawPlaced(_ count: Int) {
        body.removeLast(count)
    }
}
